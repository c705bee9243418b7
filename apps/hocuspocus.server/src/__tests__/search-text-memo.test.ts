/**
 * The title and search text a refresh stores are read through the live document's plain-text memo
 * (doc-schema's plain-text-memo.ts, issue 30): a refresh reads again only the top-level blocks changed
 * since the last one, yet stores exactly what a full walk of the document gives. Random edits by a real
 * provider (text typed and deleted, marks, blocks inserted and deleted at the top and inside lists, the
 * title's heading retyped) on a real server, each batch stored and compared with a full walk of the
 * server's live document; then one typed word costs a refresh one block read (before: every block).
 * Blocks read are counted by doc-schema's `plainTextBlocksRead`, in this process, where the server runs.
 */
import { describe, expect, test } from 'bun:test'
import { FRAGMENT_NAME, plainTextBlocksRead, readPlainText, readTitle } from '@collab/doc-schema'
import { seededRandom } from '@collab/doc-schema/test-builders'
import { DATABASE_KIND } from '@collab/test-support/database'
import { appendOrThrow, buildDocument, paragraph } from '@collab/test-support/documents'
import { connectProvider, type TestProvider } from '@collab/test-support/provider'
import { storedSearchText } from '@collab/test-support/search-text'
import { eventually, userWithToken, useTestServer } from '@collab/test-support/server'
import * as Y from 'yjs'
import type { RunningServer } from '../server.ts'

/** Every Y.XmlText under `node`, in document order. */
function textsUnder(node: Y.XmlFragment | Y.XmlElement): Y.XmlText[] {
  const out: Y.XmlText[] = []
  for (const child of node.toArray()) {
    if (child instanceof Y.XmlText) out.push(child)
    else if (child instanceof Y.XmlElement) out.push(...textsUnder(child))
  }
  return out
}

/** Every list item under `node`. */
function listItemsUnder(node: Y.XmlFragment | Y.XmlElement): Y.XmlElement[] {
  const out: Y.XmlElement[] = []
  for (const child of node.toArray()) {
    if (!(child instanceof Y.XmlElement)) continue
    if (child.nodeName === 'listItem') out.push(child)
    out.push(...listItemsUnder(child))
  }
  return out
}

const WORDS = [
  'aardvark',
  'bandicoot',
  'capybara',
  'dugong',
  'echidna',
  'fossa',
  'gerenuk',
  'hyrax',
  ' ',
  ' ',
]

describe(`title and search text through the plain-text memo (${DATABASE_KIND})`, () => {
  let server!: RunningServer
  // searchRefreshMs 0 (the tests' default): every store refreshes the title and search text at once.
  useTestServer((s) => {
    server = s
  })

  async function stored(room: string): Promise<{ title: string; searchText: string | null }> {
    const row = await server.services.db.prisma.document.findUniqueOrThrow({ where: { room } })
    return { title: row.title, searchText: await storedSearchText(server, room) }
  }

  async function acknowledgedAndStored(editor: TestProvider): Promise<void> {
    await eventually(() => expect(editor.provider.unsyncedChanges).toBe(0), 10_000, 'acknowledged')
    await eventually(() => expect(server.collab.persistence.pendingCount()).toBe(0), 10_000, 'stored')
  }

  /**
   * The stored title and search text become what a full walk reads (the refresh runs after the store's
   * append, so it may still be under way; a stale memo would never get there: nothing else is typed).
   */
  async function refreshedAsWalked(room: string): Promise<void> {
    await eventually(async () => expect(await stored(room)).toEqual(expected(room)), 10_000, 'refreshed')
  }

  /** Refreshes of a title and search text so far, as /metrics shows them. */
  function refreshes(): number {
    const count = /^collab_search_refresh_duration_seconds_count (\S+)$/m.exec(server.metrics.render())
    return Number(count?.[1] ?? 0)
  }

  /** What a full walk of the server's live document gives, as writeDerived stores it. */
  function expected(room: string): { title: string; searchText: string } {
    const fragment = server.collab.hocuspocus.documents.get(room)!.getXmlFragment(FRAGMENT_NAME)
    const title = readTitle(fragment).trim() || 'Untitled'
    return { title, searchText: `${title}\n${readPlainText(fragment)}` }
  }

  test('random edits store what a full walk reads; a typed word re-reads one block', async () => {
    const { user, token } = await userWithToken(server, 'typist')
    const doc = await buildDocument(server, user.id, { title: 'Memo title' }, (fragment) => {
      const blocks = Array.from({ length: 24 }, (_, i) => `Paragraph ${i} about things.`)
      appendOrThrow(
        fragment,
        `${blocks.slice(0, 8).join('\n\n')}\n\n## A section\n\n- one\n- two\n  - nested three\n\n> quoted\n\n` +
          `${blocks.slice(8).join('\n\n')}\n\n1. first\n2. second`,
      )
    })
    const editor = connectProvider(server.url, doc.room, token)
    try {
      await editor.ready
      const fragment = editor.doc.getXmlFragment(FRAGMENT_NAME)
      const random = seededRandom(30)
      const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!
      // The first refresh reads every block (nothing kept yet); the comparisons below are exact.
      fragment.push([paragraph('warm')])
      await acknowledgedAndStored(editor)
      await refreshedAsWalked(doc.room)

      for (let batch = 0; batch < 25; batch++) {
        editor.doc.transact(() => {
          for (let op = 0; op < 3; op++) {
            const roll = random()
            const texts = textsUnder(fragment).filter((text) => text.length > 0)
            if (roll < 0.3) {
              const text = pick(texts)
              text.insert(Math.floor(random() * (text.length + 1)), pick(WORDS))
            } else if (roll < 0.45) {
              const text = pick(texts)
              const at = Math.floor(random() * text.length)
              text.delete(at, Math.min(text.length - at, 1 + Math.floor(random() * 6)))
            } else if (roll < 0.55) {
              const text = pick(texts)
              const at = Math.floor(random() * text.length)
              text.format(at, Math.min(text.length - at, 4), { bold: {} })
            } else if (roll < 0.7) {
              fragment.insert(1 + Math.floor(random() * fragment.length), [paragraph(`new ${pick(WORDS)}`)])
            } else if (roll < 0.8 && fragment.length > 12) {
              // Any block but the first (the title's heading): a list or quote goes whole.
              fragment.delete(1 + Math.floor(random() * (fragment.length - 1)), 1)
            } else if (roll < 0.9) {
              const items = listItemsUnder(fragment)
              if (items.length > 0) pick(items).push([paragraph(`item ${pick(WORDS)}`)])
            } else {
              // The title: the first heading's own text.
              const title = fragment.get(0) as Y.XmlElement
              const text = title.get(0) as Y.XmlText
              text.insert(Math.floor(random() * (text.length + 1)), pick(WORDS))
            }
          }
        })
        await acknowledgedAndStored(editor)
        await refreshedAsWalked(doc.room)
      }

      // One word typed into one paragraph: its refresh reads that block again, and only it.
      const blocks = fragment.length
      expect(blocks).toBeGreaterThan(10)
      const before = plainTextBlocksRead()
      const refreshesBefore = refreshes()
      const target = textsUnder(fragment.get(blocks - 1) as Y.XmlElement)[0]!
      target.insert(0, 'zebu ')
      await acknowledgedAndStored(editor)
      await eventually(
        async () => expect((await stored(doc.room)).searchText).toContain('zebu'),
        10_000,
        'zebu',
      )
      // Counted before the full walk below (which reads every block itself).
      expect(plainTextBlocksRead() - before).toBe(1)
      // One refresh did it, and /metrics counts it (collab_search_refresh_duration_seconds) once its write
      // has returned (the row may be read a moment before).
      await eventually(() => expect(refreshes() - refreshesBefore).toBe(1), 10_000, 'counted')
      await refreshedAsWalked(doc.room)
    } finally {
      editor.destroy()
    }
  }, 120_000)
})
