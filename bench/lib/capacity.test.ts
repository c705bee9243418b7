/**
 * The capacity group's own arithmetic and its writing of the docs, which its run on a quiet machine
 * depends on and which a run of minutes would find wrong too late: keystrokes paired with their arrival
 * across processes (a lost one counted, not dropped), and a capacity-only run replacing its sections of
 * docs/performance.md and docs/deploy.md and nothing else.
 */
import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { type CapacityResult, keystrokeLatencies, type StepFigures } from './capacity-figures.ts'
import {
  DEPLOY_SECTION,
  PERFORMANCE_SECTION,
  renderCapacitySection,
  renderDeployEstimate,
  replaceSection,
  sectionOf,
} from './capacity-report.ts'
import { renderReport } from './report.ts'

const ROOT = join(import.meta.dir, '../..')

describe('keystrokeLatencies', () => {
  test("pairs each keystroke in the window with the first time each other editor held its author's clock", () => {
    const a = {
      room: 'r',
      client: 1,
      sent: [
        [5, 1000],
        [6, 1010],
        [7, 2500],
      ] as Array<[number, number]>,
      recv: {},
    }
    // b got clock 6 at once (5 and 6 in one update), then nothing more: 7 is lost to it.
    const b = { room: 'r', client: 2, sent: [], recv: { '1': [[6, 1020]] as Array<[number, number]> } }
    // c in another room never counts for a's keystrokes.
    const c = { room: 'other', client: 3, sent: [], recv: {} }
    const { latencies, lost, keystrokes } = keystrokeLatencies([a, b, c], 0, 2000)
    expect(keystrokes).toBe(2) // 7 was typed after the window
    expect(latencies).toEqual([10, 20])
    expect(lost).toBe(0)
    const late = keystrokeLatencies([a, b], 0, 3000)
    expect(late.keystrokes).toBe(3)
    expect(late.lost).toBe(1)
  })
})

describe('the capacity sections', () => {
  const performance = readFileSync(join(ROOT, 'docs/performance.md'), 'utf8')
  const deploy = readFileSync(join(ROOT, 'docs/deploy.md'), 'utf8')

  test('docs/performance.md and docs/deploy.md carry the markers a capacity-only run writes between', () => {
    // What is between them is the last run's (or the placeholders before one): only its first line is fixed.
    const first = (section: string | null) => section?.split('\n')[1]
    expect(first(sectionOf(performance, PERFORMANCE_SECTION))).toBe(first(renderCapacitySection(null, '')))
    expect(first(sectionOf(deploy, DEPLOY_SECTION))).toBe(first(renderDeployEstimate(null)))
  })

  test('replacing a section changes nothing outside its markers', () => {
    const section = renderCapacitySection(null, '').replace('Not measured yet.', 'Measured.')
    const written = replaceSection(performance, PERFORMANCE_SECTION, section)
    const old = sectionOf(performance, PERFORMANCE_SECTION)!
    const at = performance.indexOf(old)
    expect(written.slice(0, at)).toBe(performance.slice(0, at))
    expect(written.slice(at + section.length)).toBe(performance.slice(at + old.length))
    expect(sectionOf(written, PERFORMANCE_SECTION)).toBe(section)
    expect(() => replaceSection('no markers here', PERFORMANCE_SECTION, section)).toThrow(
      'put them back where the section goes',
    )
  })

  test("a full run's report keeps the section between the table and the notes", () => {
    const section = renderCapacitySection(null, '')
    const report = renderReport({
      rows: [],
      mode: 'full',
      machine: 'm',
      notes: '## Notes',
      capacity: section,
    })
    expect(sectionOf(report, PERFORMANCE_SECTION)).toBe(section)
    expect(report.indexOf(section)).toBeLessThan(report.indexOf('## Notes'))
  })
})

describe("docs/deploy.md's estimate from a run's figures", () => {
  const step = (load: number, carried: boolean, over: Partial<StepFigures> = {}): StepFigures => ({
    load,
    editors: load,
    documentsOpen: load / 2,
    keystrokes: load * 6,
    lostKeystrokes: 0,
    keystrokeP50: 5,
    keystrokeP99: carried ? 40 : 300,
    healthP99: 20,
    healthFailed: 0,
    serverCpu: 50,
    loadCpu: 30,
    redisCpu: 10,
    postgresCpu: 20,
    serverRssMB: 300,
    redisPublishes: load * 6,
    postgresTransactions: load,
    postgresRowsWritten: load,
    problems: carried ? [] : ['keystroke p99 300 ms > 100 ms'],
    carried,
    ...over,
  })
  const result: CapacityResult = {
    database: 'PostgreSQL + Redis',
    date: '2026-12-02T08:00:00.000Z',
    loadAverage: [0.5, 1.5],
    latencyMs: 100,
    windowMs: 6_000,
    floor: step(0, true, { keystrokes: 240 }),
    series: [
      { name: 'mcp', steps: [step(50, true), step(100, false)], highest: 50, stoppedByTime: false },
      { name: 'editors', steps: [step(200, true), step(400, false)], highest: 200, stoppedByTime: false },
      { name: 'openDocuments', steps: [step(1_000, true)], highest: 1_000, stoppedByTime: true },
    ],
    durationS: 170,
  }

  test('instances are 10,000 editors over what one carried, and the shares of Redis and PostgreSQL follow', () => {
    const text = renderDeployEstimate([result])
    expect(text).not.toContain('Placeholders')
    // 10,000 / 200 editors = 50 instances; 5,000 documents / 1,000 = 5.
    expect(text).toContain('10,000 editors need 50 and their 5,000 documents 5: **50 instances**')
    expect(text).toContain('one instance carries 50 MCP calls/s')
    // Redis: 10% of a core over 6 s = 600 ms for 1,200 publishes: 0.5 ms each; 40,000/s is 20 s a second.
    expect(text).toContain('at 0.5 ms of Redis CPU per publish')
    expect(text).toContain('**2000% busy**')
    expect(text).toContain("**Gives out first**: Redis's one thread")
  })
})
