/**
 * A refusal names the field at fault as the agent sends it. The document model names its fields as its
 * API does (fromBlock, removeBlocks, oldText, editBlocks); an agent told "fromBlock: …" is told about a
 * field it cannot send. Every refusal below must come back in the tools' own names, start to end.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { call, connectClient, mcpUrlOf } from '@collab/test-support/mcp'
import { outlineId } from '@collab/test-support/outline'
import { userWithToken } from '@collab/test-support/server'
import { useSharedServer } from '@collab/test-support/shared-server'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type { RunningServer } from '../../../server.ts'
import { MAX_MARKDOWN_CHARS } from '../limits.ts'

let server: RunningServer
let handle: (base: string) => string
useSharedServer((share) => {
  ;({ server, handle } = share)
})
let client: Client
let slug: string
let sectionId: string
let rev: string

beforeAll(async () => {
  const owner = await userWithToken(server, handle('namer'))
  client = await connectClient(mcpUrlOf(server), owner.token)
  const created = await server.services.documents.create(owner.user.id, {
    title: 'Names',
    markdown: '## Part\n\nfirst line\n\n![a picture](https://example.com/p.png)',
  })
  if (created.kind === 'error') throw new Error(created.message)
  slug = created.value.slug
  const { text } = await call(client, 'get_outline', { slug })
  sectionId = outlineId(text, 'Part')
  const read = await call(client, 'read_document', { slug, section_id: sectionId })
  rev = /^rev: ([0-9a-f]+)$/m.exec(read.text)![1]!
})
afterAll(async () => {
  await client?.close()
})

/** Document-model names (camelCase) that no tool accepts. */
const MODEL_NAMES = /\b(fromBlock|removeBlocks|afterBlock|allowMediaRemoval|oldText|newText|editBlocks)\b/

describe('refusals in the names an agent sends', () => {
  const cases: Array<[string, string, () => Record<string, unknown>, string]> = [
    [
      'a block number past the section',
      'read_document',
      () => ({ slug, section_id: sectionId, from_block: 99 }),
      'from_block: 99 is outside',
    ],
    [
      'removing a block that is not there',
      'edit_blocks',
      () => ({ slug, section_id: sectionId, rev, remove_blocks: [99] }),
      'remove_blocks: 99 not in',
    ],
    [
      'inserting after a block that is not there',
      'edit_blocks',
      () => ({ slug, section_id: sectionId, rev, after_block: 99, markdown: 'x' }),
      'after_block: 99 is not in',
    ],
    [
      'removing an image without the flag',
      'edit_blocks',
      () => ({ slug, section_id: sectionId, rev, remove_blocks: [2] }),
      'remove_blocks: block 2 holds an image or embed; keep its [image: …] placeholder line in markdown to keep it, or set allow_media_removal',
    ],
    [
      'an edit that changes nothing',
      'edit_blocks',
      () => ({ slug, section_id: sectionId, rev }),
      'markdown: give remove_blocks or markdown',
    ],
    [
      'a replacement equal to the text',
      'replace_text',
      () => ({ slug, section_id: sectionId, rev, old_text: 'first', new_text: 'first' }),
      'new_text: it equals old_text',
    ],
    [
      'a line break in a replacement',
      'replace_text',
      () => ({ slug, section_id: sectionId, rev, old_text: 'first', new_text: 'a\nb' }),
      'new_text: a line break',
    ],
  ]
  for (const [what, tool, args, start] of cases) {
    test(`${what} (${tool}): starts with "${start.split(':')[0]}:" and names no model field`, async () => {
      const refused = await call(client, tool, args())
      expect(refused.isError).toBe(true)
      expect(refused.text).toStartWith(start)
      expect(refused.text).not.toMatch(MODEL_NAMES)
    })
  }
})

describe('Markdown over the ceiling names the way on', () => {
  const over = () => 'x'.repeat(MAX_MARKDOWN_CHARS + 1)
  const cases: Array<[string, () => Record<string, unknown>, string]> = [
    ['create_document', () => ({ title: 'Too long', markdown: over() }), 'append_to_document in parts'],
    ['append_to_document', () => ({ slug, markdown: over() }), 'several append_to_document calls'],
    [
      'edit_blocks',
      () => ({ slug, section_id: sectionId, rev, markdown: over() }),
      'further edit_blocks calls',
    ],
  ]
  for (const [tool, args, way] of cases) {
    test(`${tool}: the refusal names the ceiling and says "${way}"`, async () => {
      const before = (await server.services.documents.listAll()).length
      const refused = await call(client, tool, args())
      expect(refused.isError).toBe(true)
      expect(refused.text).toContain(`markdown: over ${MAX_MARKDOWN_CHARS} characters`)
      expect(refused.text).toContain(way)
      expect((await server.services.documents.listAll()).length).toBe(before)
    })
  }
})
