/**
 * get_outline sizes sections instead of printing revs: each line says about how many characters a read of
 * its section shows, a line before the frame sizes the whole document and says whether one whole read shows
 * it, and revs come from section reads (the stale-rev refusal names that read).
 */
import { describe, expect, test } from 'bun:test'
import { createLargeDocument } from '@collab/test-support/documents'
import { call } from '@collab/test-support/mcp'
import { outlineId } from '@collab/test-support/outline'
import { eventually } from '@collab/test-support/server'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type { RunningServer } from '../../../server.ts'
import { MAX_READ_CHARS } from '../limits.ts'
import { approximate, OUTLINE_TAG_LINE } from '../render/outline.ts'
import { createDocument, frameLines, useMcpUser } from './setup.ts'

let server: RunningServer
let alice: { id: string }
let client: Client
useMcpUser('alice', (made) => {
  ;({ server, user: alice, client } = made)
})

const create = (title: string, markdown?: string) => createDocument(server, alice.id, { title, markdown })

/** `~1.2k` → 1200. */
const figure = (text: string) => {
  const [, number, unit] = /^~([\d.]+)(k|M)?$/.exec(text)!
  return Number(number) * (unit === 'k' ? 1_000 : unit === 'M' ? 1_000_000 : 1)
}

/**
 * Whether a shown figure is near a real length: two significant digits lose up to 5% and the estimate
 * itself stays within 20% of a read; a small section or document may be off by a few block numbers.
 */
const near = (shown: number, real: number) => Math.abs(shown - real) <= 0.25 * real + 20

/** An outline line: title, the start of its section id (6 characters or more), size. */
const LINE = /^ *(.*) \[([\w-]{6,16}) (~[\d.]+[kM]?)\]$/

async function readSection(slug: string, sectionId: string) {
  return (await call(client, 'read_document', { slug, section_id: sectionId })).text
}

describe('get_outline sizes', () => {
  test('each line gives its section id and about how many characters its read shows, and no rev', async () => {
    const markdown = [
      '## Short',
      'a few words',
      '## Links',
      Array.from(
        { length: 12 },
        (_, i) => `See [item ${i}](https://example.com/docs/${i}/${'x'.repeat(60)}).`,
      ).join(' '),
      '### Table',
      '| a | b |\n| --- | --- |\n| one | two |\n| three | four |',
      '## Long',
      Array.from({ length: 30 }, (_, i) => `Paragraph ${i} with some ordinary words in it.`).join('\n\n'),
    ].join('\n\n')
    const doc = await create('Sized', markdown)
    const { text, isError } = await call(client, 'get_outline', { slug: doc.slug })
    expect(isError).toBe(false)
    const { body } = frameLines(text)
    expect(body).toHaveLength(5)
    // No rev anywhere but inside random names (a section id such as `j6reva`, the slug's random suffix).
    expect(text.replaceAll(doc.slug, '').replace(/\[[^\]]*\]/g, '')).not.toContain('rev')
    for (const line of body) {
      const [, title, sectionId, size] = LINE.exec(line) ?? []
      expect(sectionId, line).toBeDefined()
      const shown = frameLines(await readSection(doc.slug, sectionId!)).body.join('\n').length
      expect(near(figure(size!), shown), `${title}: ${size} for ${shown}`).toBe(true)
    }
  })

  test('a line before the frame sizes the document; a document that fits says so, and its whole read is not cut', async () => {
    const doc = await create('Fits', '## One\n\nalpha beta\n\n## Two\n\n- gamma\n- delta')
    const outline = frameLines((await call(client, 'get_outline', { slug: doc.slug })).text)
    expect(outline.before).toHaveLength(2)
    expect(outline.before[1]).toBe(OUTLINE_TAG_LINE)
    const [, size, count] =
      /^size: (~[\d.]+[kM]?) characters in (\d+) sections\. /.exec(outline.before[0]!) ?? []
    expect(count).toBe('3')
    expect(outline.before[0]).toEndWith(
      `A whole read (read_document without section_id) shows up to ${MAX_READ_CHARS} characters: this document fits one.`,
    )
    const whole = frameLines((await call(client, 'read_document', { slug: doc.slug })).text)
    expect(whole.after).toEqual([])
    const length = whole.body.join('\n').length
    expect(near(figure(size!), length), `${size} for ${length}`).toBe(true)
  })

  test('a document over the budget: the line says a whole read would be cut (it is) and to read sections, on every page', async () => {
    const paragraph = (i: number) => `Paragraph ${i} ${'words and more words '.repeat(20)}`
    const chunks = Array.from({ length: 8 }, (_, c) =>
      Array.from({ length: 40 }, (_, i) => (i % 10 === 0 ? `## Part ${c}.${i}\n\n` : '') + paragraph(i)).join(
        '\n\n',
      ),
    )
    const doc = await createLargeDocument(server, alice.id, 'Too long', chunks)
    const first = frameLines((await call(client, 'get_outline', { slug: doc.slug })).text)
    const sections = first.body.length
    const [, size] = /^size: (~[\d.]+k) characters in (\d+) sections\. /.exec(first.before[0]!) ?? []
    expect(first.before[0]).toStartWith(`size: ${size} characters in ${sections} sections. `)
    expect(figure(size!)).toBeGreaterThan(MAX_READ_CHARS)
    expect(first.before[0]).toEndWith(
      `A whole read (read_document without section_id) shows up to ${MAX_READ_CHARS} characters: this document would be cut, so read the sections you need (read_document with section_id).`,
    )
    const whole = frameLines((await call(client, 'read_document', { slug: doc.slug })).text)
    expect(whole.after.at(-1)).toStartWith('[Truncated: ')
    const later = frameLines((await call(client, 'get_outline', { slug: doc.slug, start: 3 })).text)
    expect(later.before).toEqual(first.before)
  })

  test('an edit takes its rev from a section read; a stale rev is refused naming that read, and following it works', async () => {
    const doc = await create('Revs', '## Part\n\nfirst\n\nsecond')
    const [, , sectionId] = LINE.exec(
      frameLines((await call(client, 'get_outline', { slug: doc.slug })).text).body[1]!,
    )!
    const revOf = async () => /^rev: ([0-9a-f]{12})$/m.exec(await readSection(doc.slug, sectionId!))![1]!
    const rev = await revOf()
    const edit = (at: string, old_text: string, new_text: string) =>
      call(client, 'replace_text', { slug: doc.slug, section_id: sectionId, rev: at, old_text, new_text })
    expect((await edit(rev, 'first', 'one')).isError).toBe(false)
    const stale = await edit(rev, 'second', 'two')
    expect(stale.isError).toBe(true)
    expect(stale.text).toStartWith('rev: ')
    // The refusal names the whole id (the edit was given the start the outline prints).
    expect(stale.text).toMatch(
      new RegExp(`Call read_document with section_id: ${sectionId}[\\w-]* for its text and rev`),
    )
    expect(stale.text).not.toContain('get_outline')
    const fresh = await revOf()
    expect(fresh).not.toBe(rev)
    expect((await edit(fresh, 'second', 'two')).isError).toBe(false)
  })

  test('a stored outline without sizes (written before they were counted) is not shown: the state is decoded', async () => {
    const doc = await create('Legacy sizes', '## First\n\nalpha')
    const conn = await server.collab.hocuspocus.openDirectConnection(doc.room, {})
    await conn.disconnect() // stores, then unloads
    await eventually(() => expect(server.collab.hocuspocus.documents.has(doc.room)).toBe(false))
    const decoded = (await call(client, 'get_outline', { slug: doc.slug })).text
    expect(outlineId(decoded, 'First')).toBeDefined()
    const legacy = [{ sectionId: 'AAAAAAAAAAAAAAAA', level: 1, title: 'Old title', rev: 'abc', children: [] }]
    await server.services.db.prisma.$executeRaw`
      UPDATE document_states SET outline = ${JSON.stringify(legacy)}::jsonb
       WHERE document_id = (SELECT id FROM documents WHERE room = ${doc.room})`
    expect((await call(client, 'get_outline', { slug: doc.slug })).text).toBe(decoded)
  })
})

describe('approximate', () => {
  test('rounds to two significant digits, with k for thousands and M for millions', () => {
    const cases: Array<[number, string]> = [
      [0, '0'],
      [7, '7'],
      [47, '47'],
      [344, '340'],
      [999, '1k'],
      [1_234, '1.2k'],
      [48_300, '48k'],
      [123_456, '120k'],
      [999_999, '1M'],
      [1_540_000, '1.5M'],
    ]
    for (const [chars, shown] of cases) expect(approximate(chars)).toBe(shown)
  })
})
