/**
 * get_outline prints each section id by its shortest start that no other id of the document shares (at
 * least MIN_SECTION_ID_PREFIX characters), and every tool taking a section_id accepts that start: a real
 * client reads the outline, then reads, edits, chats and reads a resource with the ids as printed. A start
 * two ids share is refused naming both; an edit never lands anywhere but the section the start names.
 */
import { describe, expect, test } from 'bun:test'
import { HEADING_ID_ATTR } from '@collab/doc-schema'
import { appendOrThrow, buildDocument, storedText } from '@collab/test-support/documents'
import { call } from '@collab/test-support/mcp'
import { outlineEntries, outlineId } from '@collab/test-support/outline'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type * as Y from 'yjs'
import type { RunningServer } from '../../../server.ts'
import { MAX_PREFIX_CANDIDATES, MIN_SECTION_ID_PREFIX } from '../limits.ts'
import { OUTLINE_TAG_LINE, shortIds } from '../render/outline.ts'
import { documentUri } from '../resources/documents.ts'
import { createDocument, frameLines, useMcpUser } from './setup.ts'

let server: RunningServer
let owner: { id: string }
let client: Client
useMcpUser('outliner', (made) => {
  ;({ server, user: owner, client } = made)
})

/** The section id line of a read or write answer. */
const wholeIdIn = (text: string) => /^section_id: ([\w-]+)$/m.exec(text)?.[1]
const revIn = (text: string) => /^rev: ([0-9a-f]+)$/m.exec(text)![1]!

/**
 * A document whose sections after the title have the given ids, in order (headings `## <title>` with one
 * paragraph each): ids are random in real documents, so sharing a long start has to be made.
 */
function documentWithIds(title: string, sections: Array<[string, string]>) {
  return buildDocument(server, owner.id, { title }, (fragment: Y.XmlFragment) => {
    appendOrThrow(fragment, sections.map(([heading]) => `## ${heading}\n\ntext of ${heading}`).join('\n\n'))
    const headings = fragment
      .toArray()
      .filter((node): node is Y.XmlElement => 'nodeName' in node && node.nodeName === 'heading')
    sections.forEach(([, id], i) => {
      headings[i + 1]!.setAttribute(HEADING_ID_ATTR, id)
    })
  })
}

describe('get_outline ids', () => {
  test('each line ends [<id start> ~<size>]; the tag is explained once, before the frame', async () => {
    const doc = await createDocument(server, owner.id, {
      title: 'Lean outline',
      markdown: '## Goals\n\nship\n\n### Detail\n\nmore\n\n## Risks\n\nnone',
    })
    const { text } = await call(client, 'get_outline', { slug: doc.slug })
    const { before, body } = frameLines(text)
    expect(before[1]).toBe(OUTLINE_TAG_LINE)
    expect(text.split(OUTLINE_TAG_LINE)).toHaveLength(2)
    expect(body).toHaveLength(4)
    const entries = outlineEntries(text)
    expect(entries.map((e) => [e.title, e.depth])).toEqual([
      ['Lean outline', 0],
      ['Goals', 1],
      ['Detail', 2],
      ['Risks', 1],
    ])
    // Random ids share fewer than 6 leading characters (but for one pair in billions): 6 are printed.
    for (const entry of entries) expect(entry.id).toHaveLength(MIN_SECTION_ID_PREFIX)
    expect(body[1]).toBe(`  Goals [${entries[1]!.id} ~${entries[1]!.size}]`)
  })

  test('the printed ids read and edit: the answers name the whole id, the edit changes the section read', async () => {
    const doc = await createDocument(server, owner.id, {
      title: 'Short ids',
      markdown: '## Intro\n\nhello there\n\n## Usage\n\nrun it\n\n## Notes\n\nnone yet',
    })
    const outline = (await call(client, 'get_outline', { slug: doc.slug })).text
    const usage = outlineId(outline, 'Usage')
    const read = await call(client, 'read_document', { slug: doc.slug, section_id: usage })
    expect(read.isError).toBe(false)
    expect(frameLines(read.text).body).toEqual(['## Usage', '', '[1] run it'])
    const whole = wholeIdIn(read.text)!
    expect(whole).toHaveLength(16)
    expect(whole).toStartWith(usage)

    const edited = await call(client, 'edit_blocks', {
      slug: doc.slug,
      section_id: usage,
      rev: revIn(read.text),
      remove_blocks: [1],
      markdown: 'run it twice',
    })
    expect(edited.isError).toBe(false)
    expect(wholeIdIn(edited.text)).toBe(whole)
    const replaced = await call(client, 'replace_text', {
      slug: doc.slug,
      section_id: outlineId(outline, 'Notes'),
      rev: revIn(
        (await call(client, 'read_document', { slug: doc.slug, section_id: outlineId(outline, 'Notes') }))
          .text,
      ),
      old_text: 'none yet',
      new_text: 'some',
    })
    expect(replaced.isError).toBe(false)
    const stored = await storedText(server, doc.room)
    expect(stored).toContain('run it twice')
    expect(stored).toContain('some')
    expect(stored).toContain('hello there')

    // Chat and resources take the printed id as well.
    const posted = await call(client, 'post_chat_message', {
      slug: doc.slug,
      section_id: usage,
      text: 'done?',
    })
    expect(posted.text).toBe(`seq: 1\nsection_id: ${whole}`)
    const thread = await call(client, 'read_chat_thread', { slug: doc.slug, section_id: usage })
    expect(frameLines(thread.text).body.join('\n')).toContain('done?')
    const resource = await client.readResource({ uri: `${documentUri(doc.slug)}/sections/${usage}` })
    const content = resource.contents[0]
    const resourceText = content && 'text' in content ? content.text : ''
    expect(wholeIdIn(resourceText)).toBe(whole)
    expect(resourceText).toContain('[1] run it twice')
  })

  test('two ids sharing a long start: each is printed one character past it, and both starts work', async () => {
    const doc = await documentWithIds('Twins', [
      ['Alpha', 'abcdefghAAAAAAAA'],
      ['Beta', 'abcdefghBBBBBBBB'],
      ['Gamma', 'zyxwvuQQQQQQQQQQ'],
    ])
    const outline = (await call(client, 'get_outline', { slug: doc.slug })).text
    expect(outlineId(outline, 'Alpha')).toBe('abcdefghA')
    expect(outlineId(outline, 'Beta')).toBe('abcdefghB')
    expect(outlineId(outline, 'Gamma')).toBe('zyxwvu')
    for (const [id, title] of [
      ['abcdefghB', 'Beta'],
      ['zyxwvu', 'Gamma'],
    ]) {
      const read = await call(client, 'read_document', { slug: doc.slug, section_id: id })
      expect(frameLines(read.text).body[0]).toBe(`## ${title}`)
    }
  })

  test('a start two ids share is refused naming both; an edit with it changes nothing', async () => {
    const doc = await documentWithIds('Ambiguous', [
      ['Alpha', 'sharedXXAAAAAAAA'],
      ['Beta', 'sharedXXBBBBBBBB'],
    ])
    const read = await call(client, 'read_document', { slug: doc.slug, section_id: 'sharedXXA' })
    const before = await storedText(server, doc.room)
    for (const [tool, args] of [
      ['read_document', {}],
      ['edit_blocks', { rev: revIn(read.text), remove_blocks: [1], markdown: 'replaced' }],
      ['post_chat_message', { text: 'hello' }],
    ] as const) {
      const refused = await call(client, tool, { slug: doc.slug, section_id: 'sharedXX', ...args })
      expect(refused.isError, tool).toBe(true)
      expect(refused.text).toBe(
        'section_id: "sharedXX" is the start of 2 section ids: sharedXXAAAAAAAA (heading 2 of get_outline), ' +
          'sharedXXBBBBBBBB (heading 3 of get_outline). Pass the whole id of the one you mean, or the longer ' +
          'start get_outline prints for it now.',
      )
    }
    expect(await storedText(server, doc.room)).toBe(before)
    expect(await server.services.chat.listRooms(doc.id)).toEqual([])
  })

  test('more candidates than the refusal lists: it names the first few and counts the rest', async () => {
    const count = MAX_PREFIX_CANDIDATES + 2
    const doc = await documentWithIds(
      'Crowded',
      Array.from({ length: count }, (_, i) => [`H${i}`, `crowdQ${String.fromCharCode(65 + i).repeat(10)}`]),
    )
    const refused = await call(client, 'read_document', { slug: doc.slug, section_id: 'crowdQ' })
    expect(refused.isError).toBe(true)
    expect(refused.text).toStartWith(
      `section_id: "crowdQ" is the start of ${count} section ids: crowdQAAAAAAAAAA`,
    )
    expect(refused.text.match(/\(heading \d+ of get_outline\)/g)).toHaveLength(MAX_PREFIX_CANDIDATES)
    expect(refused.text).toContain(' and 2 more. ')
  })

  test('a start no id has, or one too short, is refused saying which call lists the ids', async () => {
    const doc = await createDocument(server, owner.id, { title: 'Unknown', markdown: '## Only\n\ntext' })
    const printed = outlineId((await call(client, 'get_outline', { slug: doc.slug })).text, 'Only')
    const other = printed.startsWith('Q') ? 'ZZZZZZZ' : 'QQQQQQQ'
    const unknown = await call(client, 'read_document', { slug: doc.slug, section_id: other })
    expect(unknown.isError).toBe(true)
    expect(unknown.text).toBe(
      `section_id: no heading's id starts with "${other}" (the heading may have been removed). Call get_outline for the current section ids.`,
    )
    const short = printed.slice(0, MIN_SECTION_ID_PREFIX - 1)
    const tooShort = await call(client, 'read_document', { slug: doc.slug, section_id: short })
    expect(tooShort.isError).toBe(true)
    expect(tooShort.text).toStartWith(`section_id: "${short}" is too short to name a section`)
    expect(tooShort.text).toEndWith('Call get_outline for the current section ids.')
  })
})

describe('shortIds', () => {
  test('one character past the longest start an id shares, never under 6; an id that occurs twice whole', () => {
    const ids = [
      'abcdefgh12345678',
      'abcdefgX12345678',
      'abcdefgh1234567Z',
      'zzzzzzzzzzzzzzzz',
      'qqqqqqqqqqqqqqqq',
    ]
    const short = shortIds([...ids, 'qqqqqqqqqqqqqqqq'])
    expect([...ids].map((id) => short.get(id))).toEqual([
      'abcdefgh12345678',
      'abcdefgX',
      'abcdefgh1234567Z',
      'zzzzzz',
      'qqqqqqqqqqqqqqqq',
    ])
    expect(shortIds(['aaaaaaaaaaaaaaaa', 'aaaaaaaaaaaaaaab']).get('aaaaaaaaaaaaaaaa')).toBe(
      'aaaaaaaaaaaaaaaa',
    )
  })
})
