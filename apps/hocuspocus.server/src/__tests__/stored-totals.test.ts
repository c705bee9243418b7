/**
 * A cut section read names the exact total of the section read whole (issue 26), and the total is measured
 * where the document is walked anyway, never by rendering the section at read time: an import measures it on
 * the worker, a compaction measures what its live memo has not, and both store it beside the outline; a
 * read after a restart (cold, or of the document loaded again) adopts the stored totals and renders nothing
 * to name them. An edit re-measures only the block it touched. Render work is counted with doc-schema's
 * `measuredElements` (headings and blocks rendered for totals), in this process, where the server runs.
 */
import { describe, expect, test } from 'bun:test'
import {
  FRAGMENT_NAME,
  forgetKeptTotals,
  liveOutlineWithTotals,
  measuredElements,
  renderSection,
  type StoredOutlineNode,
} from '@collab/doc-schema'
import { DATABASE_KIND } from '@collab/test-support/database'
import { appendOrThrow, buildDocument, paragraph } from '@collab/test-support/documents'
import { call, connectClient, mcpUrlOf } from '@collab/test-support/mcp'
import type { TestProvider } from '@collab/test-support/provider'
import { eventually, useRestartableServer } from '@collab/test-support/server'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import * as Y from 'yjs'

/** Blocks of the large section: a whole read is ~50 times the budget read. */
const LARGE_BLOCKS = 1_200
const line = (i: number) =>
  `Block ${i + 1}: words with **bold**, \`code\` and [a link](https://example.com/${i}).`
const BUDGET = 2_000

describe(`section totals stored beside the outline (${DATABASE_KIND})`, () => {
  const s = useRestartableServer('totals')
  let client: Client | undefined
  const mcp = async () => {
    client ??= await connectClient(mcpUrlOf(s.server), s.owner.token)
    return client
  }

  async function storedOutline(room: string): Promise<StoredOutlineNode[]> {
    const rows = await s.server.services.db.prisma.$queryRaw<Array<{ outline: StoredOutlineNode[] | null }>>`
      SELECT s.outline FROM document_states s JOIN documents d ON d.id = s.document_id WHERE d.room = ${room}`
    return rows[0]?.outline ?? []
  }
  const node = async (room: string, title: string) =>
    (await storedOutline(room)).flatMap((root) => [root, ...root.children]).find((n) => n.title === title)

  /** The length of the section read whole, from the stored state decoded here. */
  async function wholeLength(room: string, sectionId: string): Promise<number> {
    const doc = new Y.Doc()
    Y.applyUpdate(doc, (await s.server.services.documents.loadState(room))!.state!)
    const read = renderSection(doc.getXmlFragment(FRAGMENT_NAME), sectionId, {
      maxChars: Number.MAX_SAFE_INTEGER,
    })
    doc.destroy()
    if (read.kind === 'error') throw new Error(read.message)
    return read.value.text.length
  }

  /** A cut read through MCP: its total, and how many headings and blocks were rendered to name it. */
  async function cutRead(slug: string, sectionId: string) {
    const before = measuredElements()
    const { text, isError } = await call(await mcp(), 'read_document', {
      slug,
      section_id: sectionId,
      max_chars: BUDGET,
    })
    const measured = measuredElements() - before
    expect(isError).toBe(false)
    const note = new RegExp(
      `^\\[Truncated: showing ${BUDGET} of (\\d+) characters\\. Call again with a larger max_chars, up to 100000\\.\\]$`,
    ).exec(text.split('\n').at(-1)!)
    expect(note, text.slice(-300)).not.toBeNull()
    return { total: Number(note![1]), measured, text }
  }

  test('an imported document: the worker stores every total; its first cut read renders nothing to name it', async () => {
    const markdown = `# Imported\n\n## Large\n\n${Array.from({ length: LARGE_BLOCKS }, (_, i) => line(i)).join('\n\n')}\n\n## Small\n\nlast`
    const imported = await s.server.services.documents.importMarkdown(s.owner.user.id, {
      markdown,
      fallbackTitle: 'Imported',
    })
    if (imported.kind === 'error') throw new Error(imported.message)
    const { room, slug } = imported.value.document
    const large = (await node(room, 'Large'))!
    expect(large.blocks).toBe(LARGE_BLOCKS)
    expect(large.total).toBe(await wholeLength(room, large.sectionId))
    forgetKeptTotals() // none kept in this process: the read has only the stored totals
    const read = await cutRead(slug, large.sectionId)
    expect(read.total).toBe(large.total!)
    expect(read.measured).toBe(0)
  }, 120_000)

  test('a compaction stores the totals; after a restart a cold read and a read of the document loaded again render nothing to name them; an edit re-measures only its block', async () => {
    const doc = await buildDocument(s.server, s.owner.user.id, { title: 'Restarted' }, (fragment) => {
      appendOrThrow(fragment, '## Large')
      fragment.push(Array.from({ length: LARGE_BLOCKS }, (_, i) => paragraph(line(i))))
      appendOrThrow(fragment, '## Small\n\nsmall')
    })
    // Stored as a server before totals stored it (test-support's store step: the outline alone).
    expect((await node(doc.room, 'Large'))!.total).toBeUndefined()

    // One edit elsewhere; the last editor leaving unloads the document, whose compaction measures it.
    const editor = await s.connect(doc.room)
    await typeAndStore(editor, () => editor.doc.getXmlFragment(FRAGMENT_NAME).push([paragraph('more')]))
    s.closeEditors()
    await eventually(
      () => expect(s.server.collab.hocuspocus.documents.has(doc.room)).toBe(false),
      20_000,
      'unload',
    )
    const large = (await node(doc.room, 'Large'))!
    expect(large.total).toBe(await wholeLength(doc.room, large.sectionId))
    expect(large.blocks).toBe(LARGE_BLOCKS)

    await s.restart()
    client = undefined
    // A new process keeps no totals of its own (the server runs in this test's process): only what is stored.
    forgetKeptTotals()
    // Cold: the stored state decoded for the read, with the stored totals.
    const cold = await cutRead(doc.slug, large.sectionId)
    expect(cold.total).toBe(large.total!)
    expect(cold.measured).toBe(0)

    // Loaded again for an editor: the live document adopted them too.
    const again = await s.connect(doc.room)
    const live = await cutRead(doc.slug, large.sectionId)
    expect(live.total).toBe(large.total!)
    expect(live.measured).toBe(0)

    // An edit of the large section: a new revision, measured once (after the store, or by the read).
    const editFirst = (text: string) => () => {
      const children = again.doc.getXmlFragment(FRAGMENT_NAME).toArray() as Y.XmlElement[]
      const heading = children.findIndex((child) => child.getAttribute('toc-id') === large.sectionId)
      ;(children[heading + 1]!.get(0) as Y.XmlText).insert(0, text)
    }
    await typeAndStore(again, editFirst('edited '))
    const edited = await cutRead(doc.slug, large.sectionId)
    expect(edited.text).toContain('[1] edited Block 1')
    expect(edited.total).toBe(await liveWhole(again, large.sectionId))
    expect(edited.total).toBe(large.total! + 'edited '.length)
    expect(edited.measured).toBeLessThanOrEqual(LARGE_BLOCKS + 1)
    // The measuring that followed the store has measured every section by now (nothing is rendered here).
    const served = s.server.collab.hocuspocus.documents.get(doc.room)!.getXmlFragment(FRAGMENT_NAME)
    await eventually(
      () =>
        expect(
          liveOutlineWithTotals(served).every(function known(n): boolean {
            return n.total !== undefined && n.children.every(known)
          }),
        ).toBe(true),
      20_000,
      'measured',
    )
    // A second edit: only that block is rendered again, the rest stays measured.
    const measuredBefore = measuredElements()
    await typeAndStore(again, editFirst('again '))
    const second = await cutRead(doc.slug, large.sectionId)
    expect(second.total).toBe(edited.total + 'again '.length)
    expect(measuredElements() - measuredBefore).toBe(1)
  }, 120_000)

  async function typeAndStore(editor: TestProvider, change: () => void): Promise<void> {
    editor.doc.transact(change)
    await eventually(() => expect(editor.provider.unsyncedChanges).toBe(0), 10_000, 'acknowledged')
    await eventually(() => expect(s.server.collab.persistence.pendingCount()).toBe(0), 10_000, 'stored')
  }

  /** The section read whole from the editor's copy (which the server's matches once acknowledged). */
  async function liveWhole(editor: TestProvider, sectionId: string): Promise<number> {
    const read = renderSection(editor.doc.getXmlFragment(FRAGMENT_NAME), sectionId, {
      maxChars: Number.MAX_SAFE_INTEGER,
    })
    if (read.kind === 'error') throw new Error(read.message)
    return read.value.text.length
  }
})
