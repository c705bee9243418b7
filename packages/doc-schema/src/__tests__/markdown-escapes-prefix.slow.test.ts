/**
 * The slow tier (`bun run test:slow`): a bounded read of a long block writes its start exactly as the
 * whole block is written, over BOUNDED_READ_BREADTH random blocks of the relaxed escapes' characters in
 * paragraphs, headings and tables (markdown-escapes-cases.ts). Its point is breadth: each block is ~9,000
 * characters, past the budget and the prefix slack, so a run is ~45 ms and the breadth ~15 s of CPU;
 * markdown-escapes.test.ts tries BOUNDED_READ_SAMPLE of them in every `bun run test`.
 */
import { describe, test } from 'bun:test'
import { BOUNDED_READ_BREADTH, boundedReadsWriteTheWholeStart } from './markdown-escapes-cases.ts'

describe('the relaxed escapes stay safe, over many random long blocks', () => {
  test('a bounded read of a long block writes its start exactly as the whole block is written', () => {
    boundedReadsWriteTheWholeStart(BOUNDED_READ_BREADTH)
  }, 180_000)
})
