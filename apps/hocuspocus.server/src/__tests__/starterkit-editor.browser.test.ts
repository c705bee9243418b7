/**
 * The usual TipTap app (StarterKit + Collaboration + the Hocuspocus provider, no declared types) in a real
 * browser (Debian's chromium, driven by puppeteer-core; skipped when it is not installed) against a real
 * server. The attack it catches: such an editor deletes every table, task list, image and highlighted or
 * subscripted paragraph of a document just by opening it, and strips a heading's id (its section id and
 * chat room) whenever someone types in the heading. Here the document stays as it was, the page is told
 * why, and headings keep their ids.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import {
  FRAGMENT_NAME,
  fragmentToJSON,
  HEADING_ID_ATTR,
  isHeadingId,
  STARTER_KIT_TYPES,
} from '@collab/doc-schema'
import { schema } from '@collab/doc-schema/editor'
import { CHROMIUM, type Page } from '@collab/test-support/chromium'
import { DATABASE_KIND } from '@collab/test-support/database'
import { callText, connectRecording, mcpUrlOf, type RecordingClient } from '@collab/test-support/mcp'
import { outlineId } from '@collab/test-support/outline'
import { eventually, userWithToken } from '@collab/test-support/server'
import { useSharedServer } from '@collab/test-support/shared-server'
import { getSchema } from '@tiptap/core'
import StarterKit from '@tiptap/starter-kit'
import * as Y from 'yjs'
import { useStarterKitApp } from './web-support.ts'

/** Debian's chromium (`apt-get install -y chromium`; .ci/run installs it). */

const MIXED = [
  'Intro paragraph.',
  'Water is H<sub>2</sub>O.',
  'A <mark>highlighted</mark> word.',
  'E = mc<sup>2</sup>.',
  '## Tasks',
  '- [ ] one\n- [x] two',
  '## Data',
  '| a | b |\n| - | - |\n| 1 | 2 |',
  '![alt](https://example.com/a.png)',
  'https://www.youtube.com/watch?v=dQw4w9WgXcQ',
  '## Notes',
  'Plain notes.',
].join('\n\n')

/** Each kind of content StarterKit lacks, alone in a document, and the type the refusal names. */
const ONE_KIND: Array<[string, string, RegExp]> = [
  ['a table', '| a | b |\n| - | - |\n| 1 | 2 |', /would delete (table|tableRow|tableHeader|tableCell),/],
  ['a task list', '- [ ] one\n- [x] two', /would delete (taskList|taskItem),/],
  ['an image', '![alt](https://example.com/a.png)', /would delete image,/],
  ['a YouTube embed', 'https://www.youtube.com/watch?v=dQw4w9WgXcQ', /would delete youtube,/],
  ['a highlight', 'A <mark>highlighted</mark> word.', /would delete highlight,/],
  ['a subscript', 'Water is H<sub>2</sub>O.', /would delete subscript,/],
  ['a superscript', 'E = mc<sup>2</sup>.', /would delete superscript,/],
]

/** Node and mark names anywhere in a document's JSON. */
function typesIn(json: unknown): Set<string> {
  const names = new Set<string>()
  const stack = [json]
  while (stack.length > 0) {
    const node = stack.pop() as { type?: string; content?: unknown[]; marks?: Array<{ type: string }> }
    if (node.type) names.add(node.type)
    for (const mark of node.marks ?? []) names.add(mark.type)
    stack.push(...(node.content ?? []))
  }
  return names
}

const PLAIN = 'Intro.\n\n## Plans\n\nFirst plan.\n\n## Later\n\nSecond.'

describe('StarterKit 3 is what an editor that declares nothing is taken to know', () => {
  test('STARTER_KIT_TYPES are exactly @tiptap/starter-kit’s node and mark types', () => {
    const starterKit = getSchema([StarterKit])
    expect(new Set(STARTER_KIT_TYPES)).toEqual(
      new Set([...Object.keys(starterKit.nodes), ...Object.keys(starterKit.marks)]),
    )
  })

  test('its types have the project’s attributes, except the heading id (which the server keeps)', () => {
    const starterKit = getSchema([StarterKit])
    for (const [name, type] of Object.entries(starterKit.nodes)) {
      const project = Object.keys(schema.nodes[name]!.spec.attrs ?? {}).filter(
        (attr) => !(name === 'heading' && attr === HEADING_ID_ATTR),
      )
      expect({ name, attrs: Object.keys(type.spec.attrs ?? {}).sort() }).toEqual({
        name,
        attrs: project.sort(),
      })
    }
    for (const [name, type] of Object.entries(starterKit.marks))
      expect(Object.keys(type.spec.attrs ?? {}).sort()).toEqual(
        Object.keys(schema.marks[name]!.spec.attrs ?? {}).sort(),
      )
  })
})

describe.skipIf(!CHROMIUM)(`a StarterKit editor in a real browser (${DATABASE_KIND})`, () => {
  const share = useSharedServer()
  let owner: Awaited<ReturnType<typeof userWithToken>>
  let agent: RecordingClient
  const app = useStarterKitApp()

  beforeAll(async () => {
    owner = await userWithToken(share.server, share.handle('kit'))
    agent = await connectRecording(mcpUrlOf(share.server), owner.token)
  }, 60_000)
  afterAll(async () => {
    await agent?.close()
  }, 60_000)

  async function document(title: string, markdown: string) {
    const created = await share.server.services.documents.create(owner.user.id, { title, markdown })
    if (created.kind === 'error') throw new Error(created.message)
    return created.value
  }

  /** The page of the StarterKit app open on `room`, once its provider has synced. */
  const openApp = (room: string): Promise<Page> => app.open(share.server.url, room, owner.token)

  const closesOf = (page: Page) =>
    page.evaluate('window.fixture.closes') as Promise<Array<{ code: number; reason: string }>>

  /** The document as the server holds it (live when loaded, else stored). */
  async function serverJSON(room: string): Promise<unknown> {
    const live = share.server.collab.hocuspocus.documents.get(room)
    if (live) return fragmentToJSON(live.getXmlFragment(FRAGMENT_NAME))
    return storedJSON(room)
  }

  async function storedJSON(room: string): Promise<unknown> {
    const stored = await share.server.services.documents.loadState(room)
    const doc = new Y.Doc()
    if (stored?.state) Y.applyUpdate(doc, stored.state)
    return fragmentToJSON(doc.getXmlFragment(FRAGMENT_NAME))
  }

  /** The server's live top-level heading whose text starts with `text`. */
  function liveHeading(room: string, text: string): Y.XmlElement | undefined {
    const live = share.server.collab.hocuspocus.documents.get(room)
    return live
      ?.getXmlFragment(FRAGMENT_NAME)
      .toArray()
      .find(
        (c): c is Y.XmlElement =>
          c instanceof Y.XmlElement &&
          c.nodeName === 'heading' &&
          (c.get(0) as Y.XmlText | undefined)?.toString().startsWith(text) === true,
      )
  }

  test('opening a document with tables, task lists, images, embeds, highlights, subscripts and superscripts leaves it unchanged', async () => {
    const doc = await document('Mixed content', MIXED)
    const stored = await storedJSON(doc.room)
    for (const type of ['table', 'taskList', 'image', 'youtube', 'highlight', 'subscript', 'superscript'])
      expect(typesIn(stored)).toContain(type)
    const read = await callText(agent.client, 'read_document', { slug: doc.slug })
    expect(read.text).toContain('highlighted')
    const page = await openApp(doc.room)
    await eventually(async () => {
      const reasons = (await closesOf(page)).map((c) => c.reason).join('\n')
      expect(reasons).toContain('update refused: would delete')
      expect(reasons).toContain('which this editor lacks; declare its types with ?types=')
    })
    expect(await serverJSON(doc.room)).toEqual(stored)
    await page.close()
    await eventually(() => expect(share.server.collab.hocuspocus.documents.has(doc.room)).toBe(false))
    expect(await storedJSON(doc.room)).toEqual(stored)
    expect((await callText(agent.client, 'read_document', { slug: doc.slug })).text).toBe(read.text)
  })

  for (const [what, markdown, named] of ONE_KIND)
    test(`a document with only ${what} StarterKit lacks: unchanged, and the refusal names its type`, async () => {
      const doc = await document(`With ${what}`, `Intro.\n\n${markdown}\n\n## Notes\n\nPlain.`)
      const stored = await storedJSON(doc.room)
      const page = await openApp(doc.room)
      await eventually(async () =>
        expect((await closesOf(page)).map((c) => c.reason).join('\n')).toMatch(named),
      )
      expect(await serverJSON(doc.room)).toEqual(stored)
      await page.close()
    })

  test('typing in an existing heading keeps its id, its section and its chat room; a new heading gets an id', async () => {
    const doc = await document('Plain content', PLAIN)
    const page = await openApp(doc.room)
    const id = liveHeading(doc.room, 'Plans')?.getAttribute(HEADING_ID_ATTR) as string
    expect(isHeadingId(id)).toBe(true)
    await share.server.services.chat.post(doc.id, id, owner.user.id, 'about the plans')

    // A person clicks into the heading and types at its end.
    await page.click('h2')
    await page.keyboard.press('End')
    await page.keyboard.type(' ahead')
    await eventually(() => {
      const heading = liveHeading(doc.room, 'Plans ahead')
      expect(heading?.getAttribute(HEADING_ID_ATTR)).toBe(id)
    })
    // Typing on after the id came back keeps it too.
    await page.keyboard.type(' now')
    await eventually(() =>
      expect(liveHeading(doc.room, 'Plans ahead now')?.getAttribute(HEADING_ID_ATTR)).toBe(id),
    )
    const outline = await callText(agent.client, 'get_outline', { slug: doc.slug })
    expect(id).toStartWith(outlineId(outline.text, 'Plans ahead now'))
    expect((await share.server.services.chat.findRoom(doc.id, id))?.messageCount).toBe(1)

    // A new heading, typed with StarterKit's Markdown shortcut at the end of the document.
    await page.click('p:last-of-type')
    await page.keyboard.press('End')
    await page.keyboard.press('Enter')
    await page.keyboard.type('## Fresh part')
    await eventually(() =>
      expect(isHeadingId(liveHeading(doc.room, 'Fresh part')?.getAttribute(HEADING_ID_ATTR))).toBe(true),
    )
    const fresh = liveHeading(doc.room, 'Fresh part')!.getAttribute(HEADING_ID_ATTR) as string
    expect(fresh).not.toBe(id)
    const after = await callText(agent.client, 'get_outline', { slug: doc.slug })
    expect(fresh).toStartWith(outlineId(after.text, 'Fresh part'))
    expect(await closesOf(page)).toEqual([])
    await page.close()
  })
})
