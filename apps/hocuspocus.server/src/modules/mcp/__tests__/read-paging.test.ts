/**
 * read_document recovers everything it leaves out (issue 13), over a real client and database: a block
 * longer than max_chars is read in parts by following the notes (from_block and block_offset) and the parts
 * join into the block exactly; every section of a real file paged at a small budget shows each block's
 * Markdown once; a cut whole-document read names the document's real total, or says it is longer than
 * what a read counts. The pure property over many real files and budgets is doc-schema's
 * section-paging.test.ts.
 */
import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { documentToMarkdown, FRAGMENT_NAME } from '@collab/doc-schema'
import { createLargeDocument } from '@collab/test-support/documents'
import { call } from '@collab/test-support/mcp'
import { outlineEntries, outlineIds } from '@collab/test-support/outline'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type { RunningServer } from '../../../server.ts'
import { MAX_COUNTED_CHARS, MAX_READ_CHARS } from '../limits.ts'
import { frameLines, useMcpUser } from './setup.ts'

let server: RunningServer
let owner: { id: string }
let client: Client
useMcpUser('reader', (made) => {
  ;({ server, user: owner, client } = made)
})

/** The body inside the frame, and the notes after it. */
function split(text: string): { body: string; notes: string[] } {
  const { body, after } = frameLines(text)
  return { body: body.join('\n'), notes: after }
}

/** The ids get_outline prints (the start of each section id; every read accepts them). */
const sectionIds = async (slug: string) => outlineIds((await call(client, 'get_outline', { slug })).text)

type Part = { block: number; from: number; text: string }

/**
 * Reads a section from the first call to the last, following each Next page note; returns every block
 * part shown (its number, the offset it starts at, its text) in order.
 */
async function readAll(slug: string, sectionId: string, maxChars: number): Promise<Part[]> {
  const parts: Part[] = []
  let next: { from_block?: number; block_offset?: number } = {}
  for (let calls = 0; calls < 5_000; calls++) {
    const answer = await call(client, 'read_document', {
      slug,
      section_id: sectionId,
      max_chars: maxChars,
      ...next,
    })
    expect(answer.isError).toBe(false)
    const { body, notes } = split(answer.text)
    // Parts start at a line `[n] ` or `[n, from character k] ` after a blank line (the heading comes first).
    const starts = [...body.matchAll(/\n\n\[(\d+)(?:, from character (\d+))?\](?: |$)/gm)]
    starts.forEach((match, i) => {
      const end = i + 1 < starts.length ? starts[i + 1]!.index : body.length
      let text = body.slice(match.index + match[0].length, end)
      text = text.replace(/\n\[… block \d+ cut at character \d+ of its Markdown\]$/, '')
      parts.push({ block: Number(match[1]), from: Number(match[2] ?? 0), text })
    })
    const note = notes.find((line) => line.startsWith('[Next page: '))
    if (!note) return parts
    const block = Number(/from_block: (\d+)/.exec(note)![1])
    const offset = /block_offset: (\d+)/.exec(note)?.[1]
    next = { from_block: block, ...(offset === undefined ? {} : { block_offset: Number(offset) }) }
  }
  throw new Error('the section never ended')
}

/** Joins the parts of each block, checking each part starts where the previous one ended. */
function joinParts(parts: Part[]): Map<number, string> {
  const blocks = new Map<number, string>()
  for (const part of parts) {
    const sofar = blocks.get(part.block) ?? ''
    expect(part.from).toBe(sofar.length)
    blocks.set(part.block, sofar + part.text)
  }
  return blocks
}

type ChapterPart = Part & { section: string }

/**
 * Reads a chapter (with_subsections) from the first call to the last, following each Next page note as
 * written (section_id, from_section, from_block, block_offset); returns every block part shown with the
 * section it belongs to, and the sections in the order they were shown. A read's sections are the ids
 * before its frame; each starts in the body at its heading line (`headings`, from plain reads).
 */
async function readChapter(
  slug: string,
  sectionId: string,
  maxChars: number,
  headings: Map<string, string>,
): Promise<{ parts: ChapterPart[]; order: string[] }> {
  const parts: ChapterPart[] = []
  const order: string[] = []
  let next: Record<string, string | number> = { section_id: sectionId }
  for (let calls = 0; calls < 5_000; calls++) {
    const answer = await call(client, 'read_document', {
      slug,
      with_subsections: true,
      max_chars: maxChars,
      ...next,
    })
    expect(answer.isError).toBe(false)
    const lines = answer.text.split('\n')
    const open = lines.findIndex((line) => line.startsWith('⟦data: '))
    const ids = lines
      .slice(0, open)
      .map((line) => /^(?:section_id|subsection): ([\w-]+)/.exec(line)?.[1])
      .filter((id) => id !== undefined)
    const { body, notes } = split(answer.text)
    expect(body.length).toBeLessThanOrEqual(maxChars)
    // Where each section shown starts: the first at 0, each next one at its heading after a blank line.
    const starts = [0]
    for (const id of ids.slice(1)) {
      const at = body.indexOf(`\n\n${headings.get(id)!}`, starts.at(-1)! + 1)
      expect(at).toBeGreaterThan(0)
      starts.push(at + 2)
    }
    ids.forEach((id, i) => {
      if (order.at(-1) !== id) order.push(id)
      const segment = body.slice(starts[i], i + 1 < starts.length ? starts[i + 1]! - 2 : body.length)
      const blocks = [...segment.matchAll(/\n\n\[(\d+)(?:, from character (\d+))?\](?: |$)/gm)]
      blocks.forEach((match, j) => {
        const end = j + 1 < blocks.length ? blocks[j + 1]!.index : segment.length
        let text = segment.slice(match.index + match[0].length, end)
        text = text.replace(/\n\[… block \d+ cut at character \d+ of its Markdown\]$/, '')
        parts.push({ section: id, block: Number(match[1]), from: Number(match[2] ?? 0), text })
      })
    })
    const note = notes.find((line) => line.startsWith('[Next page: '))
    if (!note) return { parts, order }
    next = {}
    for (const [, name, value] of note.matchAll(
      /(section_id|from_section|from_block|block_offset): ([\w-]+)/g,
    ))
      next[name!] = name === 'section_id' || name === 'from_section' ? value! : Number(value)
    expect(note).toContain('with_subsections: true')
  }
  throw new Error('the chapter never ended')
}

/** commander's Readme (a real file of many sections), imported as a document of the owner's; its slug. */
async function importCommanderReadme() {
  const file = resolve(
    import.meta.dir,
    '../../../../../../node_modules/.bun/node_modules/commander/Readme.md',
  )
  const imported = await server.services.documents.importMarkdown(owner.id, {
    markdown: readFileSync(file, 'utf8'),
    fallbackTitle: 'commander',
  })
  if (imported.kind === 'error') throw new Error(imported.message)
  return imported.value.document.slug
}

describe('read_document: every omission is recoverable', () => {
  test('one list block of 40,000 characters read at max_chars 2000: its parts join into the block, exactly', async () => {
    const items = Array.from({ length: 800 }, (_, i) => `- item ${i + 1} with some words 😀 and \`code\``)
    const doc = await createLargeDocument(server, owner.id, 'Releases', [
      `## Releases\n\n${items.join('\n')}`,
    ])
    const [, sectionId] = await sectionIds(doc.slug)
    const whole = split(
      (
        await call(client, 'read_document', {
          slug: doc.slug,
          section_id: sectionId,
          max_chars: MAX_READ_CHARS,
        })
      ).text,
    ).body
    const block = whole.slice(whole.indexOf('\n\n[1] ') + '\n\n[1] '.length)
    expect(block.length).toBeGreaterThan(30_000)
    const parts = await readAll(doc.slug, sectionId!, 2_000)
    expect(parts.length).toBeGreaterThan(15)
    expect(joinParts(parts).get(1)).toBe(block)
  })

  test('every section of a real file, paged at max_chars 300: each block shown once, nothing skipped', async () => {
    const slug = await importCommanderReadme()
    const ids = await sectionIds(slug)
    expect(ids.length).toBeGreaterThan(20)
    for (const sectionId of ids) {
      const full = split(
        (await call(client, 'read_document', { slug, section_id: sectionId, max_chars: MAX_READ_CHARS }))
          .text,
      ).body
      const paged = joinParts(await readAll(slug, sectionId, 300))
      // The full read, rebuilt from the joined parts: the same text after the heading.
      const rebuilt = [...paged.entries()].map(([n, text]) => (text === '' ? `[${n}]` : `[${n}] ${text}`))
      const blocks = full.includes('\n\n') ? full.slice(full.indexOf('\n\n') + 2) : ''
      expect(blocks).toBe(rebuilt.join('\n\n'))
    }
  })

  test('chapters of a real file read with with_subsections at max_chars 300 and 1000, following the notes: every block of every section once, in order', async () => {
    const slug = await importCommanderReadme()
    // The outline's lines, indented by depth: a chapter is a heading and the deeper lines after it. Each
    // section's whole id (a chapter read's lines name whole ids) from a read with the id the outline prints.
    const outline: Array<{ id: string; depth: number }> = []
    const full = new Map<string, string>()
    const headings = new Map<string, string>()
    for (const entry of outlineEntries((await call(client, 'get_outline', { slug })).text)) {
      const read = (
        await call(client, 'read_document', { slug, section_id: entry.id, max_chars: MAX_READ_CHARS })
      ).text
      const id = /^section_id: ([\w-]+)$/m.exec(read)![1]!
      expect(id).toStartWith(entry.id)
      outline.push({ id, depth: entry.depth })
      const body = split(read).body
      full.set(id, body)
      headings.set(id, body.split('\n\n')[0]!)
    }
    const chapterOf = (title: string) => {
      const at = outline.findIndex(({ id }) => headings.get(id) === title)
      const end = outline.findIndex((line, i) => i > at && line.depth <= outline[at]!.depth)
      return outline.slice(at, end === -1 ? outline.length : end).map(({ id }) => id)
    }
    const commands = chapterOf('## Commands')
    expect(commands.map((id) => headings.get(id)!.split(' ')[0])).toContain('####')
    const whole = chapterOf(headings.get(outline[0]!.id)!)
    expect(whole).toHaveLength(outline.length)
    for (const [chapter, maxChars] of [
      [commands, 300],
      [commands, 1_000],
      [whole, 1_000],
    ] as const) {
      const { parts, order } = await readChapter(slug, chapter[0]!, maxChars, headings)
      expect(order).toEqual(chapter)
      for (const id of chapter) {
        const joined = joinParts(parts.filter((part) => part.section === id))
        const rebuilt = [...joined.entries()].map(([n, text]) => (text === '' ? `[${n}]` : `[${n}] ${text}`))
        const body = full.get(id)!
        expect(rebuilt.join('\n\n')).toBe(body.includes('\n\n') ? body.slice(body.indexOf('\n\n') + 2) : '')
      }
    }
  })

  test('a block_offset without from_block, or past the block, is refused naming it', async () => {
    const doc = await createLargeDocument(server, owner.id, 'Small', ['## S\n\nshort text'])
    const [, sectionId] = await sectionIds(doc.slug)
    const alone = await call(client, 'read_document', {
      slug: doc.slug,
      section_id: sectionId,
      block_offset: 3,
    })
    expect(alone.isError).toBe(true)
    expect(alone.text).toStartWith('block_offset: only works with from_block.')
    const past = await call(client, 'read_document', {
      slug: doc.slug,
      section_id: sectionId,
      from_block: 1,
      block_offset: 500,
    })
    expect(past.isError).toBe(true)
    expect(past.text).toStartWith('block_offset: 500 is past the end of block 1')
  })

  test('a cut whole-document read names the real total, or that it is longer than a read counts', async () => {
    const chunk = (c: number) =>
      Array.from({ length: 60 }, (_, i) => `## Part ${c}.${i}\n\n${'word '.repeat(190)}`).join('\n\n')
    const counted = await createLargeDocument(server, owner.id, 'Counted', [chunk(0), chunk(1)])
    const { body, notes } = split((await call(client, 'read_document', { slug: counted.slug })).text)
    const connection = await server.collab.hocuspocus.openDirectConnection(counted.room)
    const total = documentToMarkdown(connection.document!.getXmlFragment(FRAGMENT_NAME)).length
    await connection.disconnect()
    expect(total).toBeGreaterThan(MAX_READ_CHARS)
    expect(total).toBeLessThanOrEqual(MAX_COUNTED_CHARS)
    expect(notes).toEqual([
      `[Truncated: showing ${body.length} of ${total} characters. Call get_outline, then read one section at a time with section_id.]`,
    ])
    const longer = await createLargeDocument(server, owner.id, 'Longer', [0, 1, 2, 3].map(chunk))
    const read = split((await call(client, 'read_document', { slug: longer.slug })).text)
    expect(read.notes).toEqual([
      `[Truncated: showing ${read.body.length} of more than ${MAX_COUNTED_CHARS} characters. Call get_outline, then read one section at a time with section_id.]`,
    ])
  })
})
