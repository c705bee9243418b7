/**
 * deriveStored (issue 24): the heading ids (chat's heading check), the title and search text (the search
 * backfill) and the outline (the outline backfill) of a stored document nobody has open, read on the
 * documents' worker when it is large. They must be what decoding the stored content here gives, with
 * updates logged after the snapshot too (its stored outline is then stale, so the state is decoded), for a
 * small document and one past EXPORT_INLINE_BYTES.
 */
import { describe, expect, test } from 'bun:test'
import { FRAGMENT_NAME, HEADING_ID_ATTR, readOutline, readPlainText, readTitle } from '@collab/doc-schema'
import { userWithToken } from '@collab/test-support/server'
import { useSharedServer } from '@collab/test-support/shared-server'
import * as Y from 'yjs'
import { EXPORT_INLINE_BYTES } from '../documents/export-markdown.ts'
import { applyStored } from '../documents/stored-parts.ts'
import { MAX_FIND_TEXT_CHARS } from '../limits.ts'
import type { RunningServer } from '../server.ts'

const sections = (count: number, seed: string) =>
  Array.from(
    { length: count },
    (_, i) => `## ${seed} ${i}\n\n${'Words of a long paragraph. '.repeat(40)}\n`,
  ).join('\n')

describe('deriveStored', () => {
  let server: () => RunningServer = () => {
    throw new Error('no server yet')
  }
  let handle = (base: string) => base
  useSharedServer((share) => {
    server = () => share.server
    handle = share.handle
  })

  test('heading ids, title, search text and outline are those of the stored content decoded here, small or large', async () => {
    const { user } = await userWithToken(server(), handle('dora'))
    const documents = server().services.documents
    const large = sections(Math.ceil(EXPORT_INLINE_BYTES / 1000) + 20, 'Large')
    for (const markdown of [`# Small\n\n${sections(3, 'Small')}`, `# Large\n\n${large}`]) {
      const imported = await documents.importMarkdown(user.id, { markdown, fallbackTitle: 'D' })
      if (imported.kind === 'error') throw new Error(imported.message)
      const { room, id } = imported.value.document
      // Typed after the snapshot: a heading added at the end, in the log.
      const state = await documents.loadState(room)
      const doc = new Y.Doc()
      Y.applyUpdate(doc, state!.state!)
      const before = Y.encodeStateVector(doc)
      const heading = new Y.XmlElement('heading')
      heading.setAttribute('level', 2 as never)
      heading.setAttribute(HEADING_ID_ATTR, 'h-typed-late' as never)
      heading.insert(0, [new Y.XmlText('Typed late')])
      doc.getXmlFragment(FRAGMENT_NAME).push([heading])
      await documents.appendUpdate(id, Y.encodeStateAsUpdate(doc, before))
      doc.destroy()

      const stored = await documents.loadStored(room)
      if (!stored) throw new Error('not stored')
      const here = new Y.Doc()
      applyStored(here, stored)
      const fragment = here.getXmlFragment(FRAGMENT_NAME)
      const ids = fragment
        .toArray()
        .filter(
          (child): child is Y.XmlElement => child instanceof Y.XmlElement && child.nodeName === 'heading',
        )
        .map((child) => String(child.getAttribute(HEADING_ID_ATTR)))
      expect(ids).toContain('h-typed-late')
      // Each job is given its own read: a large one's bytes go to the worker (transferred, gone here).
      expect(await documents.deriveStored((await documents.loadStored(room))!, { what: 'headings' })).toEqual(
        { kind: 'ok', value: ids },
      )
      expect(
        await documents.deriveStored((await documents.loadStored(room))!, {
          what: 'search',
          maxTextChars: MAX_FIND_TEXT_CHARS,
        }),
      ).toEqual({
        kind: 'ok',
        value: { title: readTitle(fragment), text: readPlainText(fragment, MAX_FIND_TEXT_CHARS) },
      })
      // The outline is read flat (no Y.Doc): the same sections, revs and sizes as decoding gives.
      const outline = readOutline(fragment)
      expect(JSON.stringify(outline)).toContain('"title":"Typed late"')
      expect(await documents.deriveStored((await documents.loadStored(room))!, { what: 'outline' })).toEqual({
        kind: 'ok',
        value: outline,
      })
      here.destroy()
    }
  }, 120_000)
})
