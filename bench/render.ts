/**
 * Writes docs/performance.md again from the last full run's numbers (bench/results/latest.json) and the
 * current bench/notes.md: for a change to the notes after a run, without measuring again.
 *
 *   bun bench/render.ts
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { renderReport } from './lib/report.ts'
import type { Row } from './lib/types.ts'

const ROOT = join(import.meta.dir, '..')
const results = JSON.parse(readFileSync(join(ROOT, 'bench/results/latest.json'), 'utf8')) as {
  mode: string
  machine: string
  rows: Row[]
}
if (results.mode !== 'full') {
  console.error(
    `bench/results/latest.json is from a ${results.mode} run: the report is written from full runs.`,
  )
  process.exit(1)
}
const notes = readFileSync(join(ROOT, 'bench/notes.md'), 'utf8')
writeFileSync(join(ROOT, 'docs/performance.md'), renderReport({ ...results, notes }))
console.log('docs/performance.md written from bench/results/latest.json')
