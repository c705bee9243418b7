/**
 * Reads bounded by the answer, not the document, through a real SDK client over HTTP. The attacks: a list
 * nested 1,000 deep (80 KB of Yjs an editor can build; Markdown cannot) made one whole read_document take
 * seconds, rendering being super-linear in depth, while /health stalled for everyone; and a section read
 * with max_chars 500 rendered every block of a large section to name its total. Now the deep list is one
 * placeholder line and a read renders only what it shows, even inside one block that is most of the
 * document (a list of 20,000 items). While the reads run, a second client polls GET /health; every probe
 * must answer 200 (its latency is reported, not asserted). That a read skips what it does not show is
 * asserted in packages/doc-schema (render-bounds.test.ts); here it is the real path end to end.
 */
import { describe, expect, test } from 'bun:test'
import { appendMarkdown } from '@collab/doc-schema'
import { buildDocument as buildStoredDocument, nestedList, paragraph } from '@collab/test-support/documents'
import { callText, type RecordingClient, useRecordingUser } from '@collab/test-support/mcp'
import { outlineIds, wholeSectionId } from '@collab/test-support/outline'
import * as Y from 'yjs'
import { MAX_COUNTED_CHARS } from '../../modules/mcp/limits.ts'
import { FRAME_END } from '../../modules/mcp/render/frame.ts'
import type { RunningServer } from '../../server.ts'
import { reportFigure } from './support.ts'

const NESTING = 1_000
const PLACEHOLDER = '[block nested deeper than 100 levels; not shown]'
/** Blocks of the large section, ~1 KB each: a few MB of Yjs, far past any budget. */
const LARGE_BLOCKS = 4_000
/** Items of the one list that is most of a document. */
const LIST_ITEMS = 20_000

let server: RunningServer
let rc: RecordingClient
let ownerId: string
useRecordingUser('alice', (made) => {
  ;({ server, rc } = made)
  ownerId = made.user.id
})

/** A public document of alice's, built through Yjs (past the create-time Markdown ceiling) and stored. */
const buildDocument = (title: string, build: (fragment: Y.XmlFragment) => void) =>
  buildStoredDocument(server, ownerId, { title, isPrivate: false }, build)

/** The framed body of one output, after checking there is exactly one frame end. */
function body(text: string): string {
  const lines = text.split('\n')
  expect(lines.filter((line) => line === FRAME_END)).toHaveLength(1)
  const open = lines.findIndex((line) => line.startsWith('⟦data: '))
  return lines.slice(open + 1, lines.indexOf(FRAME_END)).join('\n')
}

async function read(args: Record<string, unknown>) {
  const { text, isError } = await callText(rc.client, 'read_document', args)
  expect(isError, text.slice(0, 300)).toBe(false)
  return text
}

/** GET /health every 10 ms from its own fetch client until stopped; every answer's status and latency. */
function pollHealth() {
  const probes: HealthProbe[] = []
  let running = true
  const loop = (async () => {
    while (running) {
      const sent = performance.now()
      const response = await fetch(`${server.url}/health`)
      await response.arrayBuffer()
      probes.push({ status: response.status, ms: performance.now() - sent })
      await Bun.sleep(10)
    }
  })()
  return {
    async stop() {
      running = false
      await loop
      return probes
    },
  }
}

type HealthProbe = { status: number; ms: number }

/**
 * Every /health answer during the reads was 200 (the server kept answering others), and the figures of
 * the run with the probes' count and slowest answer go to the report under `label`.
 */
function expectHealthyAndReport(
  label: string,
  probes: HealthProbe[],
  readsMs: number,
  figures: Record<string, number>,
): void {
  expect(probes.every((probe) => probe.status === 200)).toBe(true)
  const all = {
    ...figures,
    readsMs: Math.round(readsMs),
    healthProbes: probes.length,
    healthMaxMs: Math.round(Math.max(...probes.map((p) => p.ms))),
  }
  console.log(`bounded-reads ${label}`, all)
  reportFigure('bounded-reads', all)
}

describe('reads cost what they show', () => {
  test(`a list nested ${NESTING} deep reads as a placeholder line, and /health answers meanwhile`, async () => {
    const doc = await buildDocument('Deep lists', (f) => {
      const appended = appendMarkdown(f, '## Deep\n\nbefore')
      if (appended.kind === 'error') throw new Error(appended.message)
      f.insert(f.length, [nestedList(NESTING), paragraph('after')])
    })
    const outline = await callText(rc.client, 'get_outline', { slug: doc.slug })
    const sectionId = outlineIds(outline.text)[1]!

    const health = pollHealth()
    const started = performance.now()
    const whole = await read({ slug: doc.slug })
    const section = await read({ slug: doc.slug, section_id: sectionId })
    const small = await read({ slug: doc.slug, section_id: sectionId, max_chars: 500 })
    const readsMs = performance.now() - started
    const probes = await health.stop()

    expect(body(whole)).toBe(`# Deep lists\n\n## Deep\n\nbefore\n\n${PLACEHOLDER}\n\nafter`)
    expect(body(section)).toBe(`## Deep\n\n[1] before\n\n[2] ${PLACEHOLDER}\n\n[3] after`)
    expect(body(small)).toBe(body(section))
    expect(probes.length).toBeGreaterThan(0)
    expectHealthyAndReport('deep list', probes, readsMs, { nesting: NESTING })
  }, 120_000)

  test(`a section read with max_chars 500 of a ${LARGE_BLOCKS}-block section shows its first blocks and counts the rest`, async () => {
    const line = `${'Words with **bold** and a [link](https://example.com). '.repeat(18)}`
    const doc = await buildDocument('Large section', (f) => {
      const appended = appendMarkdown(f, '## Large')
      if (appended.kind === 'error') throw new Error(appended.message)
      f.insert(
        f.length,
        Array.from({ length: LARGE_BLOCKS }, (_, i) => paragraph(`Block ${i + 1}: ${line}`)),
      )
    })
    const outline = await callText(rc.client, 'get_outline', { slug: doc.slug })
    // The whole id, as the read's notes name it (the read takes the start the outline prints).
    const sectionId = await wholeSectionId(rc.client, doc.slug, outlineIds(outline.text)[1]!)

    const health = pollHealth()
    const started = performance.now()
    const outputs: string[] = []
    for (let i = 0; i < 12; i++)
      outputs.push(await read({ slug: doc.slug, section_id: sectionId, max_chars: 500 }))
    const readsMs = performance.now() - started
    const probes = await health.stop()

    const totals = new Set<number>()
    for (const text of outputs) {
      const shown = body(text)
      expect(shown.length).toBeLessThanOrEqual(500)
      expect(shown.startsWith('## Large\n\n[1] Block 1: Words')).toBe(true)
      const lines = text.split('\n')
      // Block 1 is cut: the next read continues it where this one stopped (the cut marker says where).
      const cutAt = /\[… block 1 cut at character (\d+) of its Markdown\]$/.exec(shown)?.[1]
      expect(lines.at(-2)).toBe(
        `[Next page: this read showed the start of block 1 of ${LARGE_BLOCKS}; call read_document with section_id: ${sectionId}, from_block: 1 and block_offset: ${cutAt}.]`,
      )
      const note =
        /^\[Truncated: showing 500 of (\d+) characters\. Call again with a larger max_chars, up to 100000\.\]$/.exec(
          lines.at(-1)!,
        )
      expect(note).not.toBeNull()
      totals.add(Number(note![1]))
    }
    // One total for the one revision, longer than the blocks' text alone (exact totals: doc-schema's tests).
    expect(totals.size).toBe(1)
    expect([...totals][0]!).toBeGreaterThan(LARGE_BLOCKS * line.length)
    expectHealthyAndReport('large section', probes, readsMs, { blocks: LARGE_BLOCKS, reads: outputs.length })
  }, 120_000)

  test(`one list of ${LIST_ITEMS} items, most of the document, is read only as far as the budget`, async () => {
    const doc = await buildDocument('One big list', (f) => {
      const appended = appendMarkdown(f, '## List')
      if (appended.kind === 'error') throw new Error(appended.message)
      const list = new Y.XmlElement('bulletList')
      f.insert(f.length, [list])
      list.insert(
        0,
        Array.from({ length: LIST_ITEMS }, (_, i) => {
          const item = new Y.XmlElement('listItem')
          item.insert(0, [paragraph(`item ${i + 1} ${'with some words '.repeat(4)}`)])
          return item
        }),
      )
    })
    const outline = await callText(rc.client, 'get_outline', { slug: doc.slug })
    // The whole id, as the read's notes name it (the read takes the start the outline prints).
    const sectionId = await wholeSectionId(rc.client, doc.slug, outlineIds(outline.text)[1]!)

    const health = pollHealth()
    const started = performance.now()
    const whole = await read({ slug: doc.slug, max_chars: 500 })
    const section = await read({ slug: doc.slug, section_id: sectionId, max_chars: 500 })
    const readsMs = performance.now() - started
    const probes = await health.stop()

    const wholeBody = body(whole)
    expect(wholeBody.length).toBeLessThanOrEqual(500)
    expect(wholeBody.startsWith('# One big list\n\n## List\n\n- item 1 with some words')).toBe(true)
    expect(whole.split('\n').at(-1)).toBe(
      `[Truncated: showing ${wholeBody.length} of more than ${MAX_COUNTED_CHARS} characters. Call get_outline, then read one section at a time with section_id.]`,
    )
    const sectionBody = body(section)
    expect(sectionBody.length).toBeLessThanOrEqual(500)
    expect(sectionBody.startsWith('## List\n\n[1] - item 1 with some words')).toBe(true)
    const cutAt = /\[… block 1 cut at character (\d+) of its Markdown\]$/.exec(sectionBody)?.[1]
    expect(cutAt).toBeDefined()
    // The rest of the one block is a call away (it was not before: the read ended there).
    expect(section.split('\n').at(-2)).toBe(
      `[Next page: this read showed the start of block 1 of 1; call read_document with section_id: ${sectionId}, from_block: 1 and block_offset: ${cutAt}.]`,
    )
    expect(section.split('\n').at(-1)).toMatch(
      /^\[Truncated: showing 500 of \d+ characters\. Call again with a larger max_chars, up to 100000\.\]$/,
    )
    expectHealthyAndReport('one big list', probes, readsMs, { listItems: LIST_ITEMS })
  }, 120_000)
})
