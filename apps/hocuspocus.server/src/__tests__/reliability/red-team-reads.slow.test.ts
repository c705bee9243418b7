/**
 * Whole reads of densely marked text (issue 24), on the real server process: an editor builds a paragraph
 * of 10,000 one-letter runs alternating bold and italic (what the red team built; Markdown imports cannot),
 * then an agent reads the whole document 74 times a minute through a real MCP client while a person types in
 * another document and a probe process asks /health. Each whole read renders up to MAX_RENDER_WORK units,
 * which this paragraph reaches; its inline content is written by our phrasing writer (phrasing-writer.ts).
 * A second round changes one letter of the paragraph before each read, so no read is the one before it
 * (kept answers are for unchanged documents); a third reads the paragraph's section 2,000 characters at
 * a time (read_document with section_id), an edit before each. Asserted: every read answers (text or a refusal by the user's share of server time, never an error),
 * /health answers 200 throughout, keystrokes arrive; what others felt (their p99) is reported next to a
 * floor measured the same way with nothing running, never asserted.
 * The slow tier (`bun run test:slow`): the reads are paced at the red team's 74 a minute in two rounds
 * beside two floors, ~50 s by design, which every `bun run test` paid; render-work, whole-read-worker and
 * server-time tests check the same limits quickly.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { FRAGMENT_NAME, listSections } from '@collab/doc-schema'
import { createTestDatabase, DATABASE_KIND, type TestDatabase } from '@collab/test-support/database'
import { callText, connectClient } from '@collab/test-support/mcp'
import { runCli, type ServerProcess } from '@collab/test-support/process'
import { connectProvider } from '@collab/test-support/provider'
import { eventually } from '@collab/test-support/server'
import * as Y from 'yjs'
import { firstRunToken, spawnOn, stopProcess } from './faults-support.ts'
import { MEASURED_SERVER_ENV, startProbe, startTyping } from './red-team-support.ts'
import { reportFigure } from './support.ts'

const RUNS = 10_000
const READS_PER_MINUTE = 74
const READS = 20

let db: TestDatabase
let server: ServerProcess
let token: string
/** Another person's token: the typist elsewhere. */
let otherToken: string

async function newDocument(title: string): Promise<{ room: string; slug: string }> {
  const response = await fetch(`${server.url}/api/documents`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'content-type': 'text/markdown' },
    body: `# ${title}\n\nhello`,
  })
  expect(response.status).toBe(201)
  return (await response.json()) as { room: string; slug: string }
}

/** While `work` runs, what another client sees: a typist elsewhere and the /health probe process. */
async function observed<T>(room: string, work: () => Promise<T>) {
  const typing = await startTyping(server.url, room, otherToken)
  const probe = await startProbe(server.url, server.proc.pid)
  const result = await work()
  const seen = await probe.stop()
  const typed = await typing.stop()
  return { result, seen, typed }
}

describe(`red team: whole reads of a paragraph of ${RUNS.toLocaleString('en-US')} marks (${DATABASE_KIND})`, () => {
  beforeAll(async () => {
    db = await createTestDatabase()
    const env = { ...MEASURED_SERVER_ENV, MCP_CALLS_PER_MINUTE: '120' }
    // The first start makes the owner and their token; then, the folder free, another person with a token
    // of their own: the typist whose keystrokes are what others feel (the attacker's own editing shares
    // the attacker's share and may wait, which is the point of a share).
    await stopProcess(await spawnOn(db, env))
    token = firstRunToken(db.dataDir)
    const cliEnv = { DATA_DIR: db.dataDir, DATABASE_URL: db.databaseUrl ?? '' }
    expect((await runCli(['user', 'add', 'olga'], cliEnv)).exitCode).toBe(0)
    const issued = await runCli(['token', 'issue', 'olga', '--scope', 'write', '--label', 'typist'], cliEnv)
    expect(issued.exitCode, issued.stderr).toBe(0)
    otherToken = issued.stdout.trim()
    // The red team's rate: 74 reads a minute, inside the rate limit they met.
    server = await spawnOn(db, env)
  }, 120_000)
  afterAll(async () => {
    await stopProcess(server)
    await db?.cleanup()
  }, 60_000)

  test(`${READS_PER_MINUTE} whole reads a minute while others type: every read answers, /health throughout`, async () => {
    const elsewhere = await newDocument('Elsewhere')
    const typingRoom = elsewhere.room
    // The typist may write there: the owner shares it with them (the owner's write token).
    const shared = await fetch(`${server.url}/api/documents/${elsewhere.slug}/members/olga`, {
      method: 'PUT',
      headers: { Authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ role: 'editor' }),
    })
    expect(shared.status, await shared.text()).toBeLessThan(300)
    const dense = await newDocument('Dense marks')
    // The editor writes the paragraph in parts, each within the boundary's struct ceiling.
    const editor = connectProvider(server.url, dense.room, token)
    await editor.ready
    const text = new Y.XmlText()
    const paragraph = new Y.XmlElement('paragraph')
    paragraph.insert(0, [text])
    editor.doc.transact(() => editor.doc.getXmlFragment(FRAGMENT_NAME).push([paragraph]))
    for (let part = 0; part < RUNS; part += 1_000) {
      editor.doc.transact(() => {
        for (let i = part; i < part + 1_000; i++)
          text.insert(text.length, String.fromCharCode(97 + (i % 26)), i % 2 ? { italic: {} } : { bold: {} })
      })
      await eventually(() => expect(editor.provider.unsyncedChanges).toBe(0), 30_000, 'the part stored')
    }
    editor.destroy()

    const agent = await connectClient(`${server.url}/mcp`, token)
    try {
      const first = await callText(agent, 'read_document', { slug: dense.slug })
      expect(first.isError, first.text.slice(0, 300)).toBeFalsy()
      expect(first.text).toContain('**a**_b_**c**_d_')
      const floor = await observed(typingRoom, () => Bun.sleep(3_000))
      const interval = 60_000 / READS_PER_MINUTE
      /** READS whole reads at the red team's rate; `between` runs before each (an edit, or nothing). */
      const attack = (
        between: (i: number) => Promise<void>,
        args: Record<string, unknown> = { slug: dense.slug },
      ) =>
        observed(typingRoom, async () => {
          const answers: Array<{ isError: boolean; text: string; cpuMs: number }> = []
          for (let i = 0; i < READS; i++) {
            await between(i)
            const started = performance.now()
            const read = await callText(agent, 'read_document', args)
            answers.push({ ...read, isError: Boolean(read.isError), cpuMs: performance.now() - started })
            await Bun.sleep(Math.max(0, interval - (performance.now() - started)))
          }
          return answers
        })
      const report = (name: string, what: string, seen: Awaited<ReturnType<typeof attack>>) => {
        const refused = seen.result.filter((answer) => answer.isError)
        // A refusal is the user's share of server time running out, which says when to come back.
        for (const answer of refused) expect(answer.text).toMatch(/server time|try again/i)
        const figures = {
          attack: `${READS} reads of ${RUNS} marks at ${READS_PER_MINUTE}/min${what}`,
          answered: READS - refused.length,
          refused: refused.length,
          readMedianMs: Math.round(seen.result.map((a) => a.cpuMs).sort((a, b) => a - b)[READS >> 1]!),
          healthP99Ms: seen.seen.p99Ms,
          keystrokeP99Ms: seen.typed.p99Ms,
          keystrokes: seen.typed.keystrokes,
          unseenKeystrokes: seen.typed.unseen,
          floorHealthP99Ms: floor.seen.p99Ms,
          floorKeystrokeP99Ms: floor.typed.p99Ms,
          growthMiB: seen.seen.rssGrowth >> 20,
        }
        reportFigure(name, figures)
        console.error(`${name}: ${JSON.stringify(figures)}`)
        expect(seen.seen.statuses).toEqual([200])
        expect(seen.typed.keystrokes).toBeGreaterThan(0)
      }
      // The document unchanged between reads (the red team's attack).
      report('red-team-reads', '', await attack(async () => {}))
      // An editor changes one letter before each read, so no read can be kept from the one before.
      const again = connectProvider(server.url, dense.room, token)
      await again.ready
      const fragment = again.doc.getXmlFragment(FRAGMENT_NAME)
      const runs = (fragment.get(fragment.length - 1) as Y.XmlElement).get(0) as Y.XmlText
      report(
        'red-team-reads-edited',
        ', an edit before each',
        await attack(async (i) => {
          again.doc.transact(() => runs.insert(0, String.fromCharCode(65 + (i % 26))))
          await eventually(() => expect(again.provider.unsyncedChanges).toBe(0), 30_000, 'the edit')
        }),
      )
      // The same, as section reads of the paragraph's section (2,000 characters each, as an agent paging
      // through it would), an edit before each: rendered on the event loop before issue 24's section work.
      const [section] = listSections(fragment)
      report(
        'red-team-section-reads',
        ', section reads of 2,000 characters, an edit before each',
        await attack(
          async (i) => {
            again.doc.transact(() => runs.insert(0, String.fromCharCode(97 + (i % 26))))
            await eventually(() => expect(again.provider.unsyncedChanges).toBe(0), 30_000, 'the edit')
          },
          { slug: dense.slug, section_id: section!.sectionId, max_chars: 2_000 },
        ),
      )
      again.destroy()
    } finally {
      await agent.close()
    }
  }, 360_000)
})
