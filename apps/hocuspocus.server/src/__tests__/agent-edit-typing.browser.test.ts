/**
 * A person typing in a real TipTap editor while an agent edits the same paragraph (issue 13, Editing): the
 * usual TipTap app (StarterKit + Collaboration + the Hocuspocus provider, the fixture page the StarterKit
 * browser test bundles) in Debian's chromium. The agent's replace_text and edit_blocks change the paragraph
 * in place, so the person's caret stays before the word it was at and their next keystrokes land there.
 * Before, edit_blocks deleted the paragraph and inserted a new one: the caret left it.
 */
import { beforeAll, describe, expect, test } from 'bun:test'
import { CHROMIUM, type Page } from '@collab/test-support/chromium'
import { DATABASE_KIND } from '@collab/test-support/database'
import { storedText } from '@collab/test-support/documents'
import { editingLog, recordEditing } from '@collab/test-support/editing-log'
import { call, useMcpClients } from '@collab/test-support/mcp'
import { outlineIds } from '@collab/test-support/outline'
import { eventually } from '@collab/test-support/server'
import { useSharedServer } from '@collab/test-support/shared-server'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { useStarterKitApp } from './web-support.ts'

/** Where the caret is, in characters into the paragraph whose text starts with `start`, and what follows it. */
type Caret = { offset: number; after: string } | null

describe.skipIf(!CHROMIUM)(
  `an agent edits the paragraph a person types in, in TipTap (${DATABASE_KIND})`,
  () => {
    const share = useSharedServer()
    const mcp = useMcpClients(() => share.server)
    let owner: { user: { id: string }; token: string; client: Client }
    const app = useStarterKitApp()

    beforeAll(async () => {
      owner = await mcp.user(share.handle('typist'))
    }, 60_000)

    /** The app open on `room`, synced, with the caret placed `offset` characters into the paragraph `start`. */
    async function openAt(room: string, start: string, offset: number): Promise<Page> {
      const page = await app.open(share.server.url, room, owner.token)
      await page.evaluate(
        ([text, at]) => {
          const editor = (window as unknown as { editor: EditorLike }).editor
          let from = -1
          editor.state.doc.descendants((node, pos) => {
            if (from < 0 && node.isTextblock && node.textContent.startsWith(text)) from = pos + 1
            return from < 0
          })
          editor.commands.focus()
          editor.commands.setTextSelection(from + at)
        },
        [start, offset] as const,
      )
      // TipTap's focus command focuses the editor in the next animation frame (late on a loaded machine;
      // never while the page is hidden, as a second page of one context makes the first): keys typed
      // before it go to the page's body, not the text (a suspect for the first keystrokes CI lost).
      await page.waitForFunction('window.editor.view.hasFocus()')
      return page
    }

    /** The caret as the editor holds it, relative to the paragraph whose text starts with `start`. */
    function caretOf(page: Page, start: string): Promise<Caret> {
      return page.evaluate((text) => {
        const editor = (window as unknown as { editor: EditorLike }).editor
        const { from } = editor.state.selection
        let found: { offset: number; after: string } | null = null
        editor.state.doc.descendants((node, pos) => {
          if (found || !node.isTextblock || !node.textContent.startsWith(text)) return !found
          const offset = from - pos - 1
          if (offset >= 0 && offset <= node.content.size)
            found = { offset, after: node.textContent.slice(offset, offset + 3) }
          return false
        })
        return found
      }, start)
    }

    async function sectionOf(slug: string) {
      const outline = await call(owner.client, 'get_outline', { slug })
      const read = await call(owner.client, 'read_document', {
        slug,
        section_id: outlineIds(outline.text)[1]!,
      })
      const sectionId = /^section_id: ([\w-]+)$/m.exec(read.text)![1]!
      return { sectionId, rev: /^rev: ([0-9a-f]+)$/m.exec(read.text)![1]! }
    }

    const cases: Array<
      [
        string,
        (
          slug: string,
          section: { sectionId: string; rev: string },
        ) => { name: string; args: Record<string, unknown> },
      ]
    > = [
      [
        'replace_text',
        (slug, { sectionId, rev }) => ({
          name: 'replace_text',
          args: { slug, section_id: sectionId, rev, old_text: 'quick brown', new_text: 'slow red' },
        }),
      ],
      [
        'edit_blocks',
        (slug, { sectionId, rev }) => ({
          name: 'edit_blocks',
          args: { slug, section_id: sectionId, rev, remove_blocks: [1], markdown: 'The slow red fox jumps.' },
        }),
      ],
    ]
    for (const [tool, request] of cases) {
      test(`${tool}: the caret stays before "fox" and the person's next keystrokes land there`, async () => {
        const created = await share.server.services.documents.create(owner.user.id, {
          title: `Typing ${tool}`,
          markdown: '## Part\n\nThe quick brown fox jumps.\n\nlast',
        })
        if (created.kind === 'error') throw new Error(created.message)
        const doc = created.value
        const page = await openAt(doc.room, 'The ', 'The quick brown '.length)
        try {
          expect(await caretOf(page, 'The ')).toEqual({ offset: 16, after: 'fox' })
          await recordEditing(page) // from before the agent's edit: every transaction it makes here too
          const { name, args } = request(doc.slug, await sectionOf(doc.slug))
          const edited = await call(owner.client, name, args)
          expect(edited.isError).toBe(false)
          await eventually(async () =>
            expect(await page.evaluate('window.editor.getText()')).toContain('The slow red fox jumps.'),
          )
          expect(await caretOf(page, 'The ')).toEqual({ offset: 'The slow red '.length, after: 'fox' })
          await page.waitForFunction('window.editor.view.hasFocus()')
          await page.keyboard.type('grey ')
          // Seen in CI (2026-12-03, -04, -05): the stored text lacked the first keystroke, then the editor
          // lacked all of them. The editor's own text and where the page's focus was go with a failure, so
          // it says whether the page or the server lost them, and whether the editor had lost its focus.
          const editorText = () => page.evaluate('window.editor.getText()') as Promise<string>
          const focus = () =>
            page.evaluate(
              '({ editor: window.editor.view.hasFocus(), active: document.activeElement?.className ?? null, page: document.hasFocus() })',
            )
          await eventually(async () =>
            expect({
              stored: await storedText(share.server, doc.room),
              editor: await editorText(),
              focus: await focus(),
              log: await editingLog(page),
            }).toEqual({
              stored: expect.stringContaining('The slow red grey fox jumps.'),
              editor: expect.stringContaining('The slow red grey fox jumps.'),
              focus: expect.anything(),
              log: expect.anything(),
            }),
          )
        } finally {
          await page.close()
        }
      })
    }
  },
)

/** What the tests use of the page's TipTap editor. */
type EditorLike = {
  state: {
    doc: {
      descendants(f: (node: PMNodeLike, pos: number) => boolean): void
    }
    selection: { from: number }
  }
  commands: { focus(): void; setTextSelection(pos: number): void }
}
type PMNodeLike = { isTextblock: boolean; textContent: string; content: { size: number } }
