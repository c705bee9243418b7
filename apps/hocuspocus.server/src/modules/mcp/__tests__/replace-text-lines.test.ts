/**
 * replace_text as an agent uses it over a real MCP client against a real server (issue 26): a line is
 * taken from read_document's answer exactly as printed (a nested item with its indentation, a table row,
 * code inside a list), replaced, and read again; an image placeholder is refused with the call that
 * changes it; new_text is Markdown, so *Monday* is italic.
 */
import { describe, expect, test } from 'bun:test'
import { call } from '@collab/test-support/mcp'
import { outlineIds, wholeSectionId } from '@collab/test-support/outline'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type { RunningServer } from '../../../server.ts'
import { createDocument, frameLines, useMcpUser } from './setup.ts'

let server: RunningServer
let owner: { id: string }
let client: Client
useMcpUser('agent', (made) => {
  ;({ server, user: owner, client } = made)
})

const SHAPES = `## Shapes

- top item
  - nested item one
  - nested item two
- second

  \`\`\`sh
  npm install
  \`\`\`

| Option | Default |
| - | - |
| alpha | 1 |
| beta | 2 |

![a diagram](https://x.org/a.png)

Monday is a day.`

/** A new document of SHAPES: its slug and its one section as read_document prints it. */
async function readShapes() {
  const doc = await createDocument(server, owner.id, { title: 'Lines', markdown: SHAPES })
  return { slug: doc.slug, ...(await readSection(doc.slug)) }
}

/** The first section's id, and its rev and the lines inside the frame of a section read. */
async function readSection(slug: string) {
  const outline = (await call(client, 'get_outline', { slug })).text
  const sectionId = await wholeSectionId(client, slug, outlineIds(outline)[1]!)
  const read = await call(client, 'read_document', { slug, section_id: sectionId })
  const rev = /^rev: ([0-9a-f]+)$/m.exec(read.text)![1]!
  return { sectionId, rev, lines: frameLines(read.text).body }
}

/** Replaces the printed line holding `part` by `edit(line)`; the next read shows only that line changed. */
async function replacePrintedLine(part: string, edit: (line: string) => string) {
  const { slug, sectionId, rev, lines } = await readShapes()
  const line = lines.find((l) => l.includes(part))!
  const next = edit(line)
  const answer = await call(client, 'replace_text', {
    slug,
    section_id: sectionId,
    rev,
    old_text: line,
    new_text: next,
  })
  expect(answer.text).toStartWith(`section_id: ${sectionId}\nrev: `)
  const after = await readSection(slug)
  expect(after.lines).toEqual(lines.map((l) => (l === line ? next : l)))
  return next
}

describe('replace_text takes a line as read_document printed it', () => {
  test('a nested list item, with its indentation and marker', async () => {
    expect(await replacePrintedLine('nested item two', (l) => l.replace('two', '2'))).toBe(
      '  - nested item 2',
    )
  })

  test('a table row, cell by cell', async () => {
    expect(await replacePrintedLine('| beta |', (l) => l.replace('2', '20'))).toBe('| beta | 20 |')
  })

  test('code inside a list, with the indentation the list gives it', async () => {
    expect(await replacePrintedLine('npm install', (l) => `${l} --save`)).toBe('  npm install --save')
  })

  test('*Monday* in new_text makes Monday italic', async () => {
    const { slug, sectionId, rev } = await readShapes()
    const answer = await call(client, 'replace_text', {
      slug,
      section_id: sectionId,
      rev,
      old_text: 'Monday',
      new_text: '*Monday*',
    })
    expect(answer.isError).toBe(false)
    expect((await readSection(slug)).lines).toContain('[4] *Monday* is a day.')
  })

  test('an image placeholder is refused as media, naming edit_blocks and its block', async () => {
    const { slug, sectionId, rev, lines } = await readShapes()
    const line = lines.find((l) => l.includes('[image:'))!
    expect(line).toBe('[3] [image: a diagram]')
    const refused = await call(client, 'replace_text', {
      slug,
      section_id: sectionId,
      rev,
      old_text: line,
      new_text: '[3] [image: a chart]',
    })
    expect(refused.isError).toBe(true)
    expect(refused.text).toBe(
      'old_text: "[image: a diagram]" is how a read shows media (image) in block 3, not text; replace_text ' +
        "changes text only. To change it, call edit_blocks with remove_blocks: [3] and the block's new " +
        'Markdown (an image as ![alt](url)); removing it without its placeholder line in the Markdown also ' +
        'needs allow_media_removal: true.',
    )
    expect((await readSection(slug)).lines).toEqual(lines)
  })
})
