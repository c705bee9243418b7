/**
 * Writes docs/performance.md again from the last full run's numbers (bench/results/latest.json) and the
 * current bench/notes.md: for a change to the notes after a run, without measuring again. The capacity
 * section is kept as docs/performance.md has it (a capacity-only run writes only that section).
 *
 *   bun bench/render.ts
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { CapacityResult } from './lib/capacity-figures.ts'
import { PERFORMANCE_SECTION, renderCapacitySection, sectionOf } from './lib/capacity-report.ts'
import { renderReport } from './lib/report.ts'
import type { Row } from './lib/types.ts'

const ROOT = join(import.meta.dir, '..')
const results = JSON.parse(readFileSync(join(ROOT, 'bench/results/latest.json'), 'utf8')) as {
  mode: string
  machine: string
  rows: Row[]
  capacity?: CapacityResult[]
}
if (results.mode !== 'full') {
  console.error(
    `bench/results/latest.json is from a ${results.mode} run: the report is written from full runs.`,
  )
  process.exit(1)
}
const notes = readFileSync(join(ROOT, 'bench/notes.md'), 'utf8')
// The capacity section as the last run that measured it wrote it (a capacity-only run may be newer than
// the last full run), else from the full run's results.
const written = sectionOf(readFileSync(join(ROOT, 'docs/performance.md'), 'utf8'), PERFORMANCE_SECTION)
const capacity =
  written ??
  renderCapacitySection(
    results.capacity && results.capacity.length > 0 ? results.capacity : null,
    results.machine,
  )
writeFileSync(join(ROOT, 'docs/performance.md'), renderReport({ ...results, notes, capacity }))
console.log('docs/performance.md written from bench/results/latest.json')
