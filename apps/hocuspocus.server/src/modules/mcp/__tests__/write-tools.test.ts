/**
 * The editing tools over a real client: writes reach connected editors at once and are stored before
 * success is answered; stale revs, viewers and read-only tokens change nothing. As an agent uses them
 * (issue 13, Editing): text copied from a read is found, a heading that repeats in its section is
 * retitled, refusals say why, and a person's cursor in the block an agent edits stays where it was.
 */
import { describe, expect, spyOn, test } from 'bun:test'
import { FRAGMENT_NAME, fragmentToJSON, readPlainText, renderSection } from '@collab/doc-schema'
import { storedText } from '@collab/test-support/documents'
import { call } from '@collab/test-support/mcp'
import { outlineId, outlineIds, wholeSectionId } from '@collab/test-support/outline'
import { connectProvider } from '@collab/test-support/provider'
import { eventually, userWithToken } from '@collab/test-support/server'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import * as Y from 'yjs'
import type { RunningServer } from '../../../server.ts'
import { createDocument, useMcpUser } from './setup.ts'

let server: RunningServer
let owner: { id: string }
let ownerToken: string
let client: Client
let handle: (base: string) => string
const mcp = useMcpUser('owner', (made) => {
  ;({ server, user: owner, token: ownerToken, client, handle } = made)
})
const WRITE_TOOLS = ['create_document', 'append_to_document', 'edit_blocks', 'replace_text']

const create = (title: string, markdown: string) => createDocument(server, owner.id, { title, markdown })

/**
 * The whole id of the outline's heading number `index` (0: the title): the outline prints its start, a read
 * with that start prints the whole id.
 */
async function sectionIdAt(slug: string, index: number) {
  const printed = outlineIds((await call(client, 'get_outline', { slug })).text)[index]!
  return wholeSectionId(client, slug, printed)
}

/** The rev a read of the section prints before its frame (the outline prints none). */
async function revOf(slug: string, sectionId: string) {
  const read = await call(client, 'read_document', { slug, section_id: sectionId })
  return /^rev: ([0-9a-f]+)$/m.exec(read.text)![1]!
}

async function sectionOf(slug: string, index: number) {
  const sectionId = await sectionIdAt(slug, index)
  return { sectionId, rev: await revOf(slug, sectionId) }
}

describe('write tools', () => {
  test('edit_blocks reaches a connected editor at once, is stored when answered, and a person typing elsewhere keeps it', async () => {
    const doc = await create(
      'Shared',
      '## Notes\n\nalpha\n\n## Part\n\nfirst block\n\nsecond block\n\nthird block',
    )
    const editor = connectProvider(server.url, doc.room, ownerToken)
    try {
      await editor.ready
      const { sectionId, rev } = await sectionOf(doc.slug, 2)
      // The person types in another section's block while the agent replaces block 3 of this one.
      const fragment = editor.doc.getXmlFragment(FRAGMENT_NAME)
      const alpha = fragment.get(2) as Y.XmlElement
      ;(alpha.get(0) as Y.XmlText).insert(0, 'typed ')
      const edited = await call(client, 'edit_blocks', {
        slug: doc.slug,
        section_id: sectionId,
        rev,
        remove_blocks: [3],
        markdown: 'agent block',
      })
      expect(edited.isError).toBe(false)
      expect(edited.text).toMatch(new RegExp(`^section_id: ${sectionId}\nrev: [0-9a-f]{12}$`))
      expect(await storedText(server, doc.room)).toContain('agent block')
      await eventually(() => {
        const text = readPlainText(fragment)
        expect(text).toContain('agent block')
        expect(text).toContain('typed alpha')
        expect(text).not.toContain('third block')
      })
      const section = renderSection(fragment, sectionId)
      expect(section.kind).toBe('ok')
    } finally {
      editor.destroy()
    }
  })

  test('a stale rev is refused naming rev, and nothing changes', async () => {
    const doc = await create('Stale', '## Part\n\nkeep me')
    const { sectionId, rev } = await sectionOf(doc.slug, 1)
    const first = await call(client, 'replace_text', {
      slug: doc.slug,
      section_id: sectionId,
      rev,
      old_text: 'keep me',
      new_text: 'changed once',
    })
    expect(first.isError).toBe(false)
    const before = await storedText(server, doc.room)
    const stale = await call(client, 'edit_blocks', {
      slug: doc.slug,
      section_id: sectionId,
      rev,
      remove_blocks: [1],
    })
    expect(stale.isError).toBe(true)
    expect(stale.text).toStartWith('rev: ')
    expect(await storedText(server, doc.room)).toBe(before)
  })

  test('an edit resolves its document once (each resolution is a query of access)', async () => {
    const doc = await create('Once', '## Part\n\nkeep me')
    const { sectionId, rev } = await sectionOf(doc.slug, 1)
    const resolve = spyOn(server.services.documents, 'resolve')
    try {
      const edited = await call(client, 'replace_text', {
        slug: doc.slug,
        section_id: sectionId,
        rev,
        old_text: 'keep me',
        new_text: 'kept once',
      })
      expect(edited.isError, edited.text).toBe(false)
      expect(resolve).toHaveBeenCalledTimes(1)
    } finally {
      resolve.mockRestore()
    }
  })

  test('append_to_document answers the new end; create_document refuses bad Markdown and leaves no document', async () => {
    const doc = await create('Grow', '## Start\n\nhello')
    const appended = await call(client, 'append_to_document', {
      slug: doc.slug,
      markdown: 'more hello\n\n## Middle\n\n## End\n\nbye',
    })
    // The end, then every section it created (the end included), then the section the first block joined.
    const [start, middle, end] = await Promise.all([1, 2, 3].map((i) => sectionOf(doc.slug, i)))
    expect(appended.text).toBe(
      [
        `section_id: ${end!.sectionId}`,
        `rev: ${end!.rev}`,
        `created: section_id: ${middle!.sectionId}, rev: ${middle!.rev}`,
        `created: section_id: ${end!.sectionId}, rev: ${end!.rev}`,
        `changed: section_id: ${start!.sectionId}, rev: ${start!.rev}`,
      ].join('\n'),
    )
    const plain = await call(client, 'append_to_document', { slug: doc.slug, markdown: 'tail' })
    expect(plain.text).toMatch(/^section_id: [\w-]+\nrev: [0-9a-f]{12}$/)
    expect(await storedText(server, doc.room)).toContain('bye')
    const before = (await server.services.documents.listForUser(owner.id)).length
    const refused = await call(client, 'create_document', { title: 'Bad', markdown: '# Second title' })
    expect(refused.isError).toBe(true)
    expect(refused.text).toStartWith('markdown: ')
    expect((await server.services.documents.listForUser(owner.id)).length).toBe(before)
    const made = await call(client, 'create_document', { title: 'Fresh notes', markdown: '## One\n\ntext' })
    expect(made.text).toStartWith('slug: fresh-notes')
  })

  test('a viewer and a read-only token cannot write; the read-only token lists no write tools', async () => {
    const doc = await create('Guarded', '## Part\n\nsafe')
    const viewer = await userWithToken(server, handle('viewer'))
    await server.services.documents.share(doc.slug, viewer.user.id, 'viewer')
    const viewerClient = await mcp.connect(viewer.token)
    const denied = await call(viewerClient, 'append_to_document', { slug: doc.slug, markdown: 'nope' })
    expect(denied.isError).toBe(true)
    expect(denied.text).toStartWith(`slug: you can read "${doc.slug}" but not change it`)

    const readOnly = await userWithToken(server, handle('reader'), ['read'])
    const readClient = await mcp.connect(readOnly.token)
    const names = (await readClient.listTools()).tools.map((t) => t.name)
    for (const name of WRITE_TOOLS) expect(names).not.toContain(name)
    const called = await call(readClient, 'append_to_document', { slug: doc.slug, markdown: 'nope' })
    expect(called.isError).toBe(true)
    expect(await storedText(server, doc.room)).not.toContain('nope')

    const full = (await client.listTools()).tools
    expect(full.map((t) => t.name)).toEqual(expect.arrayContaining(WRITE_TOOLS))
    const hints = Object.fromEntries(full.map((t) => [t.name, t.annotations?.destructiveHint]))
    expect(hints).toMatchObject({
      edit_blocks: true,
      replace_text: true,
      append_to_document: false,
      create_document: false,
    })
  })
})

/** A section read as the agent sees it: its id, rev and the text of each numbered block. */
async function readSection(slug: string, index: number) {
  const sectionId = await sectionIdAt(slug, index)
  const read = await call(client, 'read_document', { slug, section_id: sectionId })
  const rev = /^rev: ([0-9a-f]+)$/m.exec(read.text)![1]!
  const blocks = [...read.text.matchAll(/^\[(\d+)\] (.*)$/gm)].map((match) => match[2]!)
  return { sectionId, rev, blocks, text: read.text }
}

/** replace_text on a section at the rev it was read. */
const replaceIn = (
  slug: string,
  section: { sectionId: string; rev: string },
  args: Record<string, unknown>,
) => call(client, 'replace_text', { slug, section_id: section.sectionId, rev: section.rev, ...args })

/** A new document, its first section, and the text of replace_text's refusal of `args` there. */
async function refusedIn(title: string, markdown: string, args: Record<string, unknown>) {
  const doc = await create(title, markdown)
  const section = await readSection(doc.slug, 1)
  const refused = await replaceIn(doc.slug, section, args)
  expect(refused.isError).toBe(true)
  return { doc, section, refusal: refused.text }
}

describe('replace_text', () => {
  test('text copied from a read (an escaped URL, a code span) is found and replaced, keeping the code mark', async () => {
    const doc = await create(
      'Copied',
      '## Options\n\nSee https://github.com/tj/commander.js for the value returned by `.opts()` today.',
    )
    const section = await readSection(doc.slug, 1)
    const shown = section.blocks[0]!
    // The read shows the URL escaped and the code in backticks; the agent copies exactly that.
    const url = /https\\:\/\/\S+/.exec(shown)![0]
    expect(url).toBe('https\\://github.com/tj/commander.js')
    const first = await replaceIn(doc.slug, section, {
      old_text: url,
      new_text: 'https\\://github.com/tj/commander',
    })
    expect(first.isError).toBe(false)
    const rev = /rev: ([0-9a-f]+)/.exec(first.text)![1]!
    const second = await call(client, 'replace_text', {
      slug: doc.slug,
      section_id: section.sectionId,
      rev,
      old_text: 'returned by `.opts()`',
      new_text: 'returned by `.optsWithGlobals()`',
    })
    expect(second.isError).toBe(false)
    const after = await readSection(doc.slug, 1)
    expect(after.blocks[0]).toBe(
      'See https\\://github.com/tj/commander for the value returned by `.optsWithGlobals()` today.',
    )
    expect(await storedText(server, doc.room)).toContain('https://github.com/tj/commander for')
  })

  test('a heading whose text repeats in its section: the refusal names the places and block, block 0 retitles it', async () => {
    const { doc, section, refusal } = await refusedIn(
      'Retitle',
      '## Setup\n\nSetup is easy.\n\nRun Setup twice.',
      {
        old_text: 'Setup',
        new_text: 'Installation',
      },
    )
    expect(refusal).toBe(
      'old_text: it occurs 3 times in the section (count 3): the heading, block 1, block 2. Add surrounding ' +
        'text so it occurs once, or pass block with the one to change (0 = the heading).',
    )
    const retitled = await replaceIn(doc.slug, section, {
      old_text: 'Setup',
      new_text: 'Installation',
      block: 0,
    })
    expect(retitled.isError).toBe(false)
    const outline = await call(client, 'get_outline', { slug: doc.slug })
    expect(section.sectionId).toStartWith(outlineId(outline.text, 'Installation'))
    expect(await storedText(server, doc.room)).toContain('Setup is easy.')
  })

  test('text that is not there: the refusal names the first character that differs', async () => {
    const { refusal } = await refusedIn('Quotes', '## Part\n\nIt’s here.', {
      old_text: "It's here",
      new_text: 'It is here',
    })
    expect(refusal).toBe(
      'old_text: it does not occur in the section (count 0). Its first 2 characters ("It") occur in block 1; ' +
        'after them the text has "’" (U+2019) where old_text has "\'" (U+0027).',
    )
  })

  test('a person typing in the paragraph the agent edits keeps their cursor and their keystrokes', async () => {
    await personKeepsCursor(
      'The quick brown fox jumps. I am typing here',
      async (slug, section) => {
        const edited = await replaceIn(slug, section, {
          old_text: 'quick brown fox jumps',
          new_text: 'slow red fox walks',
        })
        expect(edited.isError).toBe(false)
      },
      'The slow red grey fox walks. I am typing here',
    )
  })
})

/**
 * A person connected to a document whose section 1 block 1 is `paragraph`, with their cursor before "fox",
 * while `agentEdit` turns "quick brown" into "slow red": afterwards the cursor is still before "fox" and
 * "grey " typed there is stored as `expected` says.
 */
async function personKeepsCursor(
  paragraph: string,
  agentEdit: (slug: string, section: { sectionId: string; rev: string }) => Promise<void>,
  expected: string,
) {
  const doc = await create('Typing', `## Part\n\n${paragraph}\n\nlast`)
  const person = connectProvider(server.url, doc.room, ownerToken)
  try {
    await person.ready
    const fragment = person.doc.getXmlFragment(FRAGMENT_NAME)
    const text = (fragment.get(2) as Y.XmlElement).get(0) as Y.XmlText
    // The cursor sits before "fox", inside the text the agent replaces (a word it keeps).
    const cursor = Y.createRelativePositionFromTypeIndex(text, 'The quick brown '.length)
    await agentEdit(doc.slug, await readSection(doc.slug, 1))
    await eventually(() => expect(readPlainText(fragment)).toContain('The slow red fox'))
    const at = Y.createAbsolutePositionFromRelativePosition(cursor, person.doc)!
    expect(at.type).toBe(text)
    expect(at.index).toBe('The slow red '.length)
    // Their next keystrokes land where they were typing.
    text.insert(at.index, 'grey ')
    await eventually(async () => expect(await storedText(server, doc.room)).toContain(expected))
  } finally {
    person.destroy()
  }
}

describe('edit_blocks', () => {
  test('a person typing in the paragraph the agent replaces keeps their cursor; the answer names created sections', async () => {
    await personKeepsCursor(
      'The quick brown fox jumps.',
      async (slug, section) => {
        const edited = await call(client, 'edit_blocks', {
          slug,
          section_id: section.sectionId,
          rev: section.rev,
          remove_blocks: [1],
          markdown: 'The slow red fox jumps.\n\n### Details\n\nmore',
        })
        expect(edited.isError).toBe(false)
        const lines = edited.text.split('\n')
        expect(lines[0]).toBe(`section_id: ${section.sectionId}`)
        expect(lines[1]).toMatch(/^rev: [0-9a-f]{12}$/)
        expect(lines[2]).toMatch(/^created: section_id: [\w-]+, rev: [0-9a-f]{12}$/)
        expect(lines).toHaveLength(3)
        const outline = await call(client, 'get_outline', { slug })
        const created = /created: section_id: ([\w-]+), rev: ([0-9a-f]+)/.exec(edited.text)!
        expect(created[1]).toStartWith(outlineId(outline.text, 'Details'))
        expect(await revOf(slug, created[1]!)).toBe(created[2]!)
      },
      'The slow red grey fox jumps.',
    )
  })

  test('in_block ticks one box of a list by sending that item; a paragraph is refused naming in_block', async () => {
    const doc = await create('Tasks', '## Todo\n\n- [ ] write\n- [ ] test\n- [ ] ship\n\nnotes')
    const section = await readSection(doc.slug, 1)
    const ticked = await call(client, 'edit_blocks', {
      slug: doc.slug,
      section_id: section.sectionId,
      rev: section.rev,
      in_block: 1,
      remove_blocks: [2],
      markdown: '- [x] test',
    })
    expect(ticked.isError).toBe(false)
    const after = await readSection(doc.slug, 1)
    expect(after.text).toContain('[1] - [ ] write\n- [x] test\n- [ ] ship')
    const refused = await call(client, 'edit_blocks', {
      slug: doc.slug,
      section_id: after.sectionId,
      rev: after.rev,
      in_block: 2,
      markdown: '- more',
    })
    expect(refused.isError).toBe(true)
    expect(refused.text).toStartWith('in_block: block 2 is a paragraph; in_block edits the items of a list')
    expect(refused.text).not.toMatch(/inBlock|removeBlocks|editBlocks|replaceText/)
  })

  test('an unknown slug is refused naming the tool call that lists documents, not the HTTP API', async () => {
    const expected =
      'slug: no document "no-such-doc" that you can open; call find_documents to list the documents you can open.'
    for (const [tool, args] of [
      ['edit_blocks', { section_id: 'x', rev: 'y', markdown: 'z' }],
      ['read_document', {}],
    ] as const) {
      const refused = await call(client, tool, { slug: 'no-such-doc', ...args })
      expect(refused.isError).toBe(true)
      expect(refused.text).toBe(expected)
    }
  })

  test('a list holding an image, copied from the read with one word changed, keeps the image (no allow_media_removal)', async () => {
    const doc = await create(
      'Pictures',
      '## Gallery\n\n- the logo\n\n  ![logo](https://x.org/logo.png)\n- the end',
    )
    const section = await readSection(doc.slug, 1)
    // Block 1 as the read shows it, every line of it.
    const block = /\[1\] ([\s\S]*?)\n⟦end of data⟧/.exec(section.text)![1]!
    expect(block).toContain('[image: logo]')
    const edited = await call(client, 'edit_blocks', {
      slug: doc.slug,
      section_id: section.sectionId,
      rev: section.rev,
      remove_blocks: [1],
      markdown: block.replace('the end', 'the last line'),
    })
    expect(edited.isError).toBe(false)
    const stored = await server.services.documents.loadState(doc.room)
    const ydoc = new Y.Doc()
    Y.applyUpdate(ydoc, stored!.state!)
    const json = JSON.stringify(fragmentToJSON(ydoc.getXmlFragment(FRAGMENT_NAME)))
    expect(json).toContain('{"type":"image","attrs":{"src":"https://x.org/logo.png","alt":"logo"}}')
    expect(json).toContain('the last line')
    expect(json).not.toContain('[image: logo]')
  })

  test('edit_blocks and replace_text name their stage to a host that asked for progress', async () => {
    const doc = await create('Stages', '## Part\n\nfirst words')
    const heard: string[] = []
    const onprogress = (p: { message?: string }) => {
      if (p.message && !p.message.startsWith('still ')) heard.push(p.message)
    }
    let section = await readSection(doc.slug, 1)
    await client.callTool(
      {
        name: 'edit_blocks',
        arguments: { slug: doc.slug, section_id: section.sectionId, rev: section.rev, markdown: 'more' },
      },
      undefined,
      { onprogress },
    )
    section = await readSection(doc.slug, 1)
    await client.callTool(
      {
        name: 'replace_text',
        arguments: {
          slug: doc.slug,
          section_id: section.sectionId,
          rev: section.rev,
          old_text: 'first',
          new_text: '1st',
        },
      },
      undefined,
      { onprogress },
    )
    expect(heard).toEqual([
      'editing blocks and storing 4 characters of Markdown',
      'replacing 5 characters of text and storing the change',
    ])
  })
})
