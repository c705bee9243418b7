/**
 * Load and soak (`bun run soak`): two real server processes on loopback ports, sharing one PostgreSQL
 * database and one Redis; MCP clients (about 70% read calls, 30% write calls) and editor providers typing,
 * half on each instance, until a deadline. Then every provider's copy of every document, each instance's
 * live copy (a fresh provider on each) and the stored state must be identical, no call may have failed
 * (rate-limit refusals and stale-rev refusals are answers, counted apart), and no token or document text
 * may appear in either instance's log.
 *
 *   bun run soak                 # 60 s, 100 MCP clients, 20 providers, 20 documents; rewrites docs
 *   bun run soak -- --quick      # 10 s, 20 MCP clients, 5 providers, 5 documents (CI)
 *   flags: --write-docs  --seconds=N --clients=N --providers=N --documents=N --think-ms=N --seed=N
 *
 * Needs SOAK_DATABASE_URL (or TEST_DATABASE_URL): a PostgreSQL server where a fresh database is created
 * and dropped afterwards; and SOAK_REDIS_URL (or TEST_REDIS_URL). Exit 0: all held; 1: something failed;
 * 2: an input is missing.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { FRAGMENT_NAME, type OutlineNode, readOutline } from '@collab/doc-schema'
import { dropDatabase } from '@collab/test-support/database'
import { type ServerProcess, spawnServer } from '@collab/test-support/process'
import { connectProvider, type TestProvider } from '@collab/test-support/provider'
import { startTestServer } from '@collab/test-support/server'
import { Client as PgClient } from 'pg'
import * as Y from 'yjs'
import { wholeUpdateText } from '../whole-state.ts'
import { findLogLeaks, type LogSecret } from './log-check.ts'
import { type Convergence, serverErrors, soakReport, writeSoakFigures } from './soak-report.ts'
import {
  canonical,
  describeDifference,
  Recorder,
  runMcpWorker,
  type Section,
  type SoakDocument,
  seededRandom,
  startTypist,
  type Typist,
} from './soak-support.ts'

const argv = process.argv.slice(2)
const flag = (name: string) => argv.includes(`--${name}`)
const numberFlag = (name: string, fallback: number) => {
  const raw = argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3)
  if (raw === undefined) return fallback
  const value = Number(raw)
  if (!Number.isInteger(value) || value < 0) usage(`--${name}: expected a whole number, got "${raw}"`)
  return value
}
function usage(message: string): never {
  console.error(`soak: ${message}`)
  process.exit(2)
}
for (const arg of argv) {
  if (!/^--(quick|write-docs|(seconds|clients|providers|documents|think-ms|seed)=.*)$/.test(arg))
    usage(
      `unknown argument "${arg}" (flags: --quick --write-docs --seconds= --clients= --providers= --documents= --think-ms= --seed=)`,
    )
}

const quick = flag('quick')
const settings = {
  seconds: numberFlag('seconds', quick ? 10 : 60),
  clients: numberFlag('clients', quick ? 20 : 100),
  providers: numberFlag('providers', quick ? 5 : 20),
  documents: Math.max(1, numberFlag('documents', quick ? 5 : 20)),
  thinkMs: numberFlag('think-ms', 100),
  seed: numberFlag('seed', Math.floor(Math.random() * 2 ** 31)),
}
/** The default full run records its figures; a quick or tuned run only when asked. */
const writeDocs = flag('write-docs') || (!quick && !argv.some((a) => a.includes('=')))
const adminUrl = process.env.SOAK_DATABASE_URL || process.env.TEST_DATABASE_URL
const redisUrl = process.env.SOAK_REDIS_URL || process.env.TEST_REDIS_URL
if (!adminUrl)
  usage(
    'needs PostgreSQL: set SOAK_DATABASE_URL (or TEST_DATABASE_URL) to postgresql://… of a role with CREATEDB',
  )
if (!redisUrl) usage('needs Redis: set SOAK_REDIS_URL (or TEST_REDIS_URL) to redis://…')
const adminServerUrl: string = adminUrl ?? ''

/** Generous enough that the run is never limited; a refusal would still be counted as rate limited. */
const CALLS_PER_MINUTE = 100_000
const CONVERGE_TIMEOUT_MS = 30_000
/** Clients start spread over this time (the load is counted from the start, ramp included). */
const RAMP_MS = 3_000
const log = (message: string) => process.stderr.write(`soak: ${message}\n`)

const random = seededRandom(settings.seed)
const phrase = `kestrel${settings.seed.toString(36)}${Date.now().toString(36)}`
const failures: string[] = []
const started = Date.now()
const loadAtStart = loadavg()[0]!

// A fresh database on the PostgreSQL server, as createTestDatabase does; dropped at the end.
const dbName = `collab_soak_${process.pid}_${Math.random().toString(36).slice(2, 8)}`
const dbUrl = new URL(adminUrl)
dbUrl.pathname = `/${dbName}`
const databaseUrl = dbUrl.toString()
const dataDirs: string[] = []
const instances: ServerProcess[] = []
const providers: TestProvider[] = []

async function adminQuery(sql: string): Promise<void> {
  const admin = new PgClient({ connectionString: adminUrl })
  await admin.connect()
  try {
    await admin.query(sql)
  } finally {
    await admin.end()
  }
}

async function cleanup(): Promise<void> {
  for (const p of providers) p.destroy()
  for (const instance of instances) {
    if (instance.proc.exitCode === null) {
      instance.proc.kill('SIGKILL')
      await instance.proc.exited
    }
  }
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true })
  await dropDatabase(adminServerUrl, dbName).catch((error) =>
    log(`dropping database ${dbName} failed: ${(error as Error).message}`),
  )
}

type Seeded = { documents: SoakDocument[]; tokens: string[]; ownerToken: string }

/** Users, tokens and documents, written through the server's own services before the instances start. */
async function seed(): Promise<Seeded> {
  const dataDir = mkdtempSync(join(tmpdir(), 'collab-soak-seed-'))
  dataDirs.push(dataDir)
  const server = await startTestServer({ dataDir, databaseUrl })
  try {
    const { users, tokens, documents } = server.services
    const userCount = Math.max(2, Math.ceil(settings.clients / 5))
    const people: Array<{ id: string; token: string }> = []
    for (let i = 0; i < userCount; i++) {
      const user = await users.add(`soak-${i}`)
      if (user.kind === 'error') throw new Error(user.message)
      const issued = await tokens.issue(user.value.id, { scopes: ['read', 'write'], label: 'soak' })
      if (issued.kind === 'error') throw new Error(issued.message)
      people.push({ id: user.value.id, token: issued.value.token })
    }
    const owner = people[0]!
    const docs: SoakDocument[] = []
    for (let i = 0; i < settings.documents; i++) {
      const part = (name: string) =>
        `## Part ${name}\n\nFirst paragraph of part ${name}, mark-${i}${name} ${phrase}.\n\nSecond paragraph of part ${name}.`
      const markdown = [
        `Intro of soak plan ${i + 1}, ${phrase}.`,
        part('one'),
        part('two'),
        part('three'),
        '## Notes\n\nEditors type below.',
      ].join('\n\n')
      const created = await documents.create(owner.id, { title: `Soak plan ${i + 1}`, markdown })
      if (created.kind === 'error') throw new Error(created.message)
      for (const person of people.slice(1)) {
        const shared = await documents.share(created.value.slug, person.id, 'editor')
        if (shared.kind === 'error') throw new Error(shared.message)
      }
      const stored = await documents.loadState(created.value.room)
      const copy = new Y.Doc()
      if (stored?.state) Y.applyUpdate(copy, stored.state)
      const flat = (nodes: OutlineNode[]): Section[] =>
        nodes.flatMap((n) => [{ id: n.sectionId, title: n.title }, ...flat(n.children)])
      const sections = flat(readOutline(copy.getXmlFragment(FRAGMENT_NAME)))
      docs.push({ slug: created.value.slug, room: created.value.room, sections })
    }
    return { documents: docs, tokens: people.map((p) => p.token), ownerToken: owner.token }
  } finally {
    await server.stop()
  }
}

async function startInstance(): Promise<ServerProcess> {
  const dataDir = mkdtempSync(join(tmpdir(), 'collab-soak-'))
  dataDirs.push(dataDir)
  const instance = await spawnServer({
    DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
    LOG_LEVEL: 'debug',
    MCP_CALLS_PER_MINUTE: String(CALLS_PER_MINUTE),
    // A throughput run of five clients per user: each user's share of server time (fairness between
    // users, tested in server-time.test.ts) would pace them.
    MCP_SERVER_SHARE_PERCENT: '0',
  })
  instances.push(instance)
  return instance
}

/** Resolves when `check` returns true, or false once `timeoutMs` has passed. */
async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const end = Date.now() + timeoutMs
  for (;;) {
    if (await check()) return true
    if (Date.now() > end) return false
    await Bun.sleep(50)
  }
}

async function run(): Promise<{ recorder: Recorder; typists: Typist[]; convergence: Convergence }> {
  await adminQuery(`CREATE DATABASE "${dbName}"`)
  log(
    `seed ${settings.seed}: ${settings.documents} documents, ${settings.clients} MCP clients, ${settings.providers} providers, ${settings.seconds} s`,
  )
  const seeded = await seed()
  const [a, b] = await Promise.all([startInstance(), startInstance()])
  const urls = [a!.url, b!.url]
  log(`instances on ${urls.join(' and ')}`)

  const recorder = new Recorder()
  const typists: Typist[] = []
  for (let i = 0; i < settings.providers; i++) {
    const doc = seeded.documents[i % seeded.documents.length]!
    const typist = await startTypist(
      urls[i % 2]!,
      doc,
      seeded.tokens[i % seeded.tokens.length]!,
      random,
      [100, 250],
    )
    providers.push(typist.editor)
    typists.push(typist)
  }
  const deadline = Date.now() + settings.seconds * 1000
  const progress = setInterval(() => {
    const calls = recorder.total(undefined)
    log(
      `${Math.round((deadline - Date.now()) / 1000)} s left: ${calls} calls, ${recorder.failures.length} failed`,
    )
  }, 10_000)
  const workers = Array.from({ length: settings.clients }, (_, i) =>
    runMcpWorker({
      mcpUrl: `${urls[i % 2]}/mcp`,
      token: seeded.tokens[i % seeded.tokens.length]!,
      documents: seeded.documents,
      recorder,
      phrase,
      deadline,
      random: seededRandom(settings.seed + i + 1),
      thinkMs: settings.thinkMs,
      startDelayMs: Math.floor((RAMP_MS * i) / settings.clients),
    }),
  )
  await Promise.all(workers)
  clearInterval(progress)
  await Promise.all(typists.map((t) => t.stop()))
  log(`load over: ${recorder.total(undefined)} calls; waiting for the editors to sync`)
  if (!(await waitFor(() => typists.every((t) => !t.editor.provider.hasUnsyncedChanges), 15_000)))
    failures.push('providers: some typed changes were never acknowledged by the server within 15 s')

  // Each instance's live copy: a fresh provider per document on each instance.
  const verifiers = seeded.documents.map((doc) =>
    urls.map((url) => {
      const p = connectProvider(url, doc.room, seeded.ownerToken)
      providers.push(p)
      return p
    }),
  )
  await Promise.all(verifiers.flat().map((p) => p.ready))
  const copiesOf = (i: number): Y.Doc[] => [
    ...typists.filter((t) => t.doc === seeded.documents[i]).map((t) => t.editor.doc),
    ...verifiers[i]!.map((p) => p.doc),
  ]
  const sameEverywhere = (i: number) => new Set(copiesOf(i).map(canonical)).size === 1
  await waitFor(() => seeded.documents.every((_, i) => sameEverywhere(i)), CONVERGE_TIMEOUT_MS)
  const finals: string[] = []
  let converged = 0
  for (const [i, doc] of seeded.documents.entries()) {
    const forms = copiesOf(i).map(canonical)
    finals.push(forms[forms.length - 1]!)
    if (new Set(forms).size === 1) converged++
    else
      failures.push(
        `convergence: ${doc.slug}: copies differ after ${CONVERGE_TIMEOUT_MS / 1000} s: ${describeDifference(forms[0]!, forms[forms.length - 1]!)}`,
      )
  }

  // The stored state: both instances stop (SIGTERM stores every pending change), then the database is read.
  for (const p of providers.splice(0)) p.destroy()
  for (const instance of instances) instance.proc.kill('SIGTERM')
  const codes = await Promise.all(
    instances.map((instance) =>
      Promise.race([instance.proc.exited, Bun.sleep(60_000).then(() => 'no exit within 60 s')]),
    ),
  )
  for (const [i, code] of codes.entries())
    if (code !== 0)
      failures.push(`instance ${i + 1}: SIGTERM ended with ${code} (0 means every change stored)`)
  const pg = new PgClient({ connectionString: databaseUrl })
  await pg.connect()
  const rows = (
    await pg.query<{ room: string; state: Buffer; updates: Buffer[] | null }>(
      `SELECT d.room,
              CASE WHEN s.parts = 0 THEN s.state ELSE (SELECT string_agg(p.data, ''::bytea ORDER BY p.n)
                FROM document_state_parts p WHERE p.document_id = s.document_id) END AS state,
              (SELECT array_agg(${wholeUpdateText('u')} ORDER BY u.id) FROM document_updates u WHERE u.document_id = d.id)
                AS updates
         FROM documents d JOIN document_states s ON s.document_id = d.id`,
    )
  ).rows
  await pg.end()
  let stored = 0
  for (const [i, doc] of seeded.documents.entries()) {
    const row = rows.find((r) => r.room === doc.room)
    if (!row) {
      failures.push(`stored state: ${doc.slug}: no stored state`)
      continue
    }
    const copy = new Y.Doc()
    // What a load applies: the snapshot, then the update log in order.
    Y.applyUpdate(copy, new Uint8Array(row.state))
    for (const logged of row.updates ?? []) Y.applyUpdate(copy, new Uint8Array(logged))
    const form = canonical(copy)
    if (form === finals[i]) stored++
    else failures.push(`stored state: ${doc.slug}: ${describeDifference(finals[i]!, form)} (live vs stored)`)
  }

  // No token and no document or chat text in either instance's log.
  const secrets: LogSecret[] = [
    { kind: 'text', label: 'the phrase every soak text holds', value: phrase },
    ...seeded.tokens.map((value, i): LogSecret => ({ kind: 'token', label: `token of soak-${i}`, value })),
  ]
  for (const [i, instance] of instances.entries()) {
    const logs = instance.stderr()
    if (process.env.SOAK_KEEP_LOGS)
      writeFileSync(join(process.env.SOAK_KEEP_LOGS, `instance-${i + 1}.log`), logs)
    const errors = serverErrors(logs)
    if (errors.length) log(`instance ${i + 1} logged errors:\n  ${errors.join('\n  ')}`)
    if (!logs.includes('"tool":"'))
      failures.push(`logs: instance ${i + 1} logged no tool call (log check void)`)
    for (const leak of findLogLeaks(logs, secrets)) failures.push(`logs: instance ${i + 1}: ${leak}`)
  }
  return {
    recorder,
    typists,
    convergence: {
      documents: seeded.documents.length,
      copiesPerDocument: `its typing provider${settings.providers > settings.documents ? 's' : ''} and a fresh provider on each instance`,
      converged,
      stored,
    },
  }
}

let exitCode = 0
try {
  const { recorder, typists, convergence } = await run()
  for (const f of recorder.failures.slice(0, 10))
    failures.push(`call: ${f.tool}: ${f.kind}: ${f.detail.replaceAll(phrase, '<phrase>').slice(0, 240)}`)
  if (recorder.failures.length > 10) failures.push(`… ${recorder.failures.length - 10} more failed calls`)
  if (recorder.total(undefined, (k) => k === 'ok') === 0) failures.push('no call succeeded')
  const seconds = Math.round((Date.now() - started) / 1000)
  const summary = soakReport({
    recorder,
    typists,
    convergence,
    settings,
    seconds,
    logsFailed: failures.some((f) => f.startsWith('logs:')),
  })
  console.log(summary)
  if (failures.length) {
    console.log(`\nFAILED (${failures.length}):\n${failures.map((f) => `  ${f}`).join('\n')}`)
    exitCode = 1
  } else {
    console.log('\nOK: no failed call, every copy converged and matches the stored state, logs clean.')
  }
  if (writeDocs && exitCode === 0) {
    writeSoakFigures(summary, quick ? 'quick' : 'full', loadAtStart)
    log('docs/reliability.md: soak figures rewritten')
  } else if (writeDocs) {
    log('docs/reliability.md left unchanged (the run failed)')
  }
} catch (error) {
  console.error(`soak: ${(error as Error).stack ?? error}`)
  for (const [i, instance] of instances.entries())
    console.error(`--- instance ${i + 1} stderr (last 2,000 chars):\n${instance.stderr().slice(-2000)}`)
  exitCode = 1
} finally {
  await cleanup()
}
process.exit(exitCode)
