/**
 * The front door rehearsed (issue 29): three real server processes on PostgreSQL and Redis behind a real
 * nginx running the repository's recipe (deploy/nginx/collab.conf with collab-proxy.conf, TLS with a
 * certificate made here by openssl), people typing through reconnecting providers and an agent writing
 * through MCP, all through nginx only. Every instance is restarted in turn with SIGTERM (drain, hand-over,
 * store), then one is killed with -9.
 *
 * Counted at the end, from the database: every word every typist typed is stored (the providers live on
 * and send what an instance had not acknowledged to the next one), every answered MCP write is stored, and
 * of editors that vanish together with the killed instance, everything acknowledged more than a second
 * before the kill is stored (the durability rule, docs/server.md). Needs TEST_DATABASE_URL, TEST_REDIS_URL,
 * nginx and openssl; .ci/run installs nginx.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createTestDatabase, type TestDatabase } from '@collab/test-support/database'
import { callText } from '@collab/test-support/mcp'
import { REPO_DIR, type ServerProcess, spawnServer } from '@collab/test-support/process'
import { editorSocketUrl } from '@collab/test-support/provider'
import { eventually, TEST_REDIS_URL, TWO_INSTANCES } from '@collab/test-support/server'
import { HocuspocusProvider, HocuspocusProviderWebsocket } from '@hocuspocus/provider'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import * as Y from 'yjs'
import {
  type AckTracker,
  firstRunToken,
  freePort,
  linePerEditor,
  plainText,
  readStored,
  stopProcess,
  trackAcknowledgements,
  typeContinuously,
} from './faults-support.ts'
import { reportFigure } from './support.ts'

const NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx', '/usr/local/sbin/nginx'].find((p) => existsSync(p))
const HAS_OPENSSL = (() => {
  try {
    execFileSync('openssl', ['version'], { stdio: 'pipe' })
    return true
  } catch {
    return false
  }
})()
const SKIP_REASON = !TWO_INSTANCES
  ? 'needs TEST_DATABASE_URL and TEST_REDIS_URL'
  : !NGINX
    ? 'needs nginx (apt-get install nginx)'
    : !HAS_OPENSSL
      ? 'needs openssl'
      : undefined

const INSTANCES = 3
const TYPISTS = 4
/** Each typist types a word this often (ms). */
const WORD_MS = 100
/** Editors that vanish with the killed instance (their typing is never resent). */
const KILL_EDITORS = 3
/** The promise for kill -9: acknowledged typing older than this survives (docs/server.md, Durability). */
const DURABLE_WITHIN_MS = 1_000
/** The drain each SIGTERM takes here: short, nginx skips a draining instance by its 503s and refusals. */
const DRAIN_MS = 1_000

const DEPLOY = join(REPO_DIR, 'deploy/nginx')

/** The recipe's collab.conf as an operator adapts it: the instances' ports, their listen ports, the certificate. */
function renderRecipe(opts: {
  upstreams: number[]
  plainPort: number
  tlsPort: number
  dir: string
}): string {
  let conf = readFileSync(join(DEPLOY, 'collab.conf'), 'utf8')
  const servers = opts.upstreams
    .map((p) => `    server 127.0.0.1:${p} max_fails=1 fail_timeout=5s;`)
    .join('\n')
  conf = conf.replace(/(upstream collab \{\n)(?:\s*server [^\n]*\n)+/, `$1${servers}\n`)
  conf = conf.replace(/^\s*listen \[::\]:\d+[^\n]*\n/gm, '') // loopback IPv4 only here
  conf = conf.replace(/listen 80;/, `listen 127.0.0.1:${opts.plainPort};`)
  conf = conf.replace(/listen 443 ssl;/, `listen 127.0.0.1:${opts.tlsPort} ssl;`)
  conf = conf.replace(/ssl_certificate\s+\S+;/, `ssl_certificate ${join(opts.dir, 'cert.pem')};`)
  conf = conf.replace(/ssl_certificate_key\s+\S+;/, `ssl_certificate_key ${join(opts.dir, 'key.pem')};`)
  conf = conf.replace(/include \S+collab-proxy\.conf;/, `include ${join(DEPLOY, 'collab-proxy.conf')};`)
  for (const must of [`127.0.0.1:${opts.tlsPort} ssl`, join(DEPLOY, 'collab-proxy.conf'), 'cert.pem'])
    if (!conf.includes(must))
      throw new Error(`deploy/nginx/collab.conf no longer has what the test adapts: ${must}`)
  return conf
}

/** nginx of its own: a temporary prefix, its own pid, logs and temp folders, in the foreground. */
async function startNginx(dir: string, recipe: string, tlsPort: number) {
  const user = execFileSync('id', ['-un']).toString().trim()
  const group = execFileSync('id', ['-gn']).toString().trim()
  for (const sub of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'])
    mkdirSync(join(dir, 'tmp', sub), { recursive: true })
  writeFileSync(join(dir, 'collab.conf'), recipe)
  writeFileSync(
    join(dir, 'nginx.conf'),
    [
      'daemon off;',
      // Read only when started as root (workers then run as this user, not nobody).
      `user ${user} ${group};`,
      'worker_processes 1;',
      `pid ${join(dir, 'nginx.pid')};`,
      `error_log ${join(dir, 'error.log')} warn;`,
      'events { worker_connections 1024; }',
      'http {',
      `  access_log ${join(dir, 'access.log')};`,
      ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map(
        (k, i) => `  ${k}_temp_path ${join(dir, 'tmp', ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'][i]!)};`,
      ),
      `  include ${join(dir, 'collab.conf')};`,
      '}',
      '',
    ].join('\n'),
  )
  const args = ['-p', dir, '-c', join(dir, 'nginx.conf'), '-e', join(dir, 'error.log')]
  execFileSync(NGINX!, [...args, '-t'], { stdio: 'pipe' }) // the recipe must pass nginx's own check
  const proc = Bun.spawn([NGINX!, ...args], { stdin: 'ignore', stdout: 'ignore', stderr: 'pipe' })
  const { connect } = await import('node:net')
  await eventually(
    () =>
      new Promise<void>((resolve, reject) => {
        const socket = connect(tlsPort, '127.0.0.1')
        socket.once('connect', () => {
          socket.destroy()
          resolve()
        })
        socket.once('error', reject)
      }),
    15_000,
    'nginx listening',
  )
  return proc
}

type Typist = {
  provider: HocuspocusProvider
  socket: HocuspocusProviderWebsocket
  doc: Y.Doc
  closes: number
}

describe.skipIf(SKIP_REASON !== undefined)('rolling restart and kill -9 behind nginx (postgres)', () => {
  let db: TestDatabase
  let dir: string
  let nginx: ReturnType<typeof Bun.spawn> | undefined
  const instances: Array<ServerProcess | undefined> = []
  const ports: number[] = []
  const providers: Array<{ destroy(): void }> = []

  beforeAll(async () => {
    db = await createTestDatabase()
    dir = mkdtempSync(join(tmpdir(), 'balancer-'))
  }, 60_000)
  afterAll(async () => {
    for (const p of providers) p.destroy()
    await Promise.all(instances.map((instance) => stopProcess(instance)))
    if (nginx && nginx.exitCode === null) {
      nginx.kill('SIGQUIT')
      await nginx.exited
    }
    await db?.cleanup()
    if (dir) rmSync(dir, { recursive: true, force: true })
  }, 60_000)

  test('nothing acknowledged is lost across a rolling restart and a kill -9; OAuth URLs name the proxy', async () => {
    // A certificate for 127.0.0.1, made now and trusted by the clients below (never committed).
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { stdio: 'pipe' },
    )
    const ca = readFileSync(join(dir, 'cert.pem'), 'utf8')
    const tlsFetch = ((url: string | URL | Request, init?: RequestInit) =>
      fetch(url, { ...init, tls: { ca } } as RequestInit)) as typeof fetch
    /** Bun's WebSocket, trusting the test's certificate. */
    class TlsWebSocket extends WebSocket {
      constructor(url: string | URL, protocols?: string | string[]) {
        super(url, { protocols, tls: { ca } } as unknown as string[])
      }
    }

    for (let i = 0; i < INSTANCES; i++) ports.push(await freePort())
    const plainPort = await freePort()
    const tlsPort = await freePort()
    const front = `https://127.0.0.1:${tlsPort}`
    const env = (port: number) => ({
      DATA_DIR: db.dataDir,
      DATABASE_URL: db.databaseUrl ?? '',
      REDIS_URL: TEST_REDIS_URL,
      PORT: String(port),
      PUBLIC_URL: front,
      LOG_LEVEL: 'warn',
      MCP_CALLS_PER_MINUTE: '0',
      DRAIN_GRACE_MS: String(DRAIN_MS),
    })
    // The first start makes the first user and token; the others find the database ready.
    instances[0] = await spawnServer(env(ports[0]!))
    await Promise.all(
      ports.slice(1).map(async (port, i) => {
        instances[i + 1] = await spawnServer({ ...env(port), MIGRATE_ON_START: 'false' })
      }),
    )
    const token = firstRunToken(db.dataDir)
    nginx = await startNginx(dir, renderRecipe({ upstreams: ports, plainPort, tlsPort, dir }), tlsPort)

    // Plain HTTP is sent to TLS; OAuth's metadata, fetched through the proxy, names the public URL.
    const redirect = await fetch(`http://127.0.0.1:${plainPort}/health/ready`, { redirect: 'manual' })
    expect(redirect.status).toBe(308)
    expect(redirect.headers.get('location')).toBe(`https://127.0.0.1/health/ready`)
    const resource = (await (await tlsFetch(`${front}/.well-known/oauth-protected-resource/mcp`)).json()) as {
      resource: string
      authorization_servers: string[]
    }
    expect(resource.resource).toBe(`${front}/mcp`)
    expect(resource.authorization_servers).toEqual([`${front}/auth`])
    const issuer = (await (
      await tlsFetch(`${front}/.well-known/oauth-authorization-server/auth`)
    ).json()) as {
      issuer: string
      authorization_endpoint: string
      token_endpoint: string
    }
    expect(issuer.issuer).toBe(`${front}/auth`)
    expect(issuer.authorization_endpoint.startsWith(`${front}/auth/`)).toBe(true)
    expect(issuer.token_endpoint.startsWith(`${front}/auth/`)).toBe(true)
    expect((await tlsFetch(`${front}/metrics`)).status).toBe(404) // operators' figures stay off the front door

    // The agent, through nginx.
    const agent = new Client({ name: 'balancer-agent', version: '1.0.0' })
    await agent.connect(
      new StreamableHTTPClientTransport(new URL(`${front}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${token}` } },
        fetch: tlsFetch,
      }),
    )
    const created = await callText(agent, 'create_document', { title: 'Rolling restart' })
    const slug = /slug: (\S+)/.exec(created.text)?.[1]
    const { room } = (await (
      await tlsFetch(`${front}/api/documents/${slug}`, { headers: { Authorization: `Bearer ${token}` } })
    ).json()) as { room: string }

    /** A provider as the web editor has it: through the front door, reconnecting whenever its socket closes. */
    const connect = (): Typist => {
      const doc = new Y.Doc()
      const socket = new HocuspocusProviderWebsocket({
        url: editorSocketUrl(front),
        WebSocketPolyfill: TlsWebSocket,
        delay: 100,
        minDelay: 100,
        maxDelay: 1_000,
        maxAttempts: 0,
      })
      const provider = new HocuspocusProvider({ websocketProvider: socket, name: room, document: doc, token })
      provider.attach()
      const typist: Typist = { provider, socket, doc, closes: 0 }
      provider.on('close', () => typist.closes++)
      const handle = {
        destroy() {
          provider.destroy()
          socket.destroy()
        },
      }
      providers.push(handle)
      return typist
    }
    const synced = (t: Typist) => t.provider.isSynced && t.provider.unsyncedChanges === 0

    const typists = Array.from({ length: TYPISTS }, connect)
    await eventually(() => expect(typists.every(synced)).toBe(true), 30_000, 'typists synced')
    const lines = await linePerEditor(typists.map((t) => ({ ...t, ready: Promise.resolve(), destroy() {} })))
    const typing = typeContinuously(
      typists.map((t) => ({ ...t, ready: Promise.resolve(), destroy() {} })),
      lines,
      WORD_MS,
      (n) => ` w${n}`,
    )

    // The agent appends a numbered paragraph after each answer; a failed call is tried again.
    const answered: string[] = []
    let agentFailures = 0
    let writing = true
    const agentLoop = (async () => {
      let n = 0
      while (writing) {
        const text = `agent write ${n} done` // no write's text is part of another's
        try {
          const result = await callText(agent, 'append_to_document', { slug, markdown: text })
          if (result.isError) agentFailures++
          else {
            answered.push(text)
            n++
          }
        } catch {
          agentFailures++
        }
        await Bun.sleep(150)
      }
    })()

    // Rolling restart: each instance drains, stores and exits 0, then starts again on its port.
    await Bun.sleep(1_000)
    for (let i = 0; i < INSTANCES; i++) {
      instances[i]!.proc.kill('SIGTERM')
      const code = await instances[i]!.proc.exited
      // Exit 0: everything it held was stored (its log says what was not).
      expect({ instance: i, code, log: code === 0 ? '' : instances[i]!.stderr() }).toEqual({
        instance: i,
        code: 0,
        log: '',
      })
      instances[i] = await spawnServer({ ...env(ports[i]!), MIGRATE_ON_START: 'false' })
      await eventually(async () =>
        expect((await fetch(`http://127.0.0.1:${ports[i]}/health/ready`)).status).toBe(200),
      )
    }

    // kill -9: editors that vanish with the killed instance; which instance is nginx's choice, so the
    // one with the most open editor sockets is killed.
    const killEditors = Array.from({ length: KILL_EDITORS }, connect)
    await eventually(() => expect(killEditors.every(synced)).toBe(true), 30_000, 'kill editors synced')
    const killLines = await linePerEditor(
      killEditors.map((t) => ({ ...t, ready: Promise.resolve(), destroy() {} })),
    )
    const trackers: AckTracker[] = killEditors.map((t) =>
      trackAcknowledgements({ ...t, ready: Promise.resolve(), destroy() {} }),
    )
    const killTyping = typeContinuously(
      killEditors.map((t) => ({ ...t, ready: Promise.resolve(), destroy() {} })),
      killLines,
      WORD_MS,
      (n) => ` k${n}`,
    )
    await Bun.sleep(2_000)
    const sockets = await Promise.all(
      ports.map(async (port) => {
        const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()
        return Number(/^collab_websocket_connections (\d+)/m.exec(metrics)?.[1] ?? 0)
      }),
    )
    const victim = sockets.indexOf(Math.max(...sockets))
    const killedAt = performance.now()
    instances[victim]!.proc.kill('SIGKILL')
    // The kill editors vanish at the same moment: what they had not got acknowledged is never resent.
    await killTyping.stop()
    for (const t of trackers) t.stop()
    for (const t of killEditors) {
      t.provider.destroy()
      t.socket.destroy()
    }
    await instances[victim]!.proc.exited
    // Started again, as systemd's Restart=on-failure would (deploy/systemd/collab@.service); meanwhile the
    // typists it served reconnect, through nginx, to the two left.
    instances[victim] = await spawnServer({ ...env(ports[victim]!), MIGRATE_ON_START: 'false' })

    // Typing and writing go on a little, then stop; every typist must have everything acknowledged.
    await Bun.sleep(1_000)
    writing = false
    await agentLoop
    await typing.stop()
    await eventually(
      () =>
        expect(
          typists.map((t) => ({
            status: String(t.socket.status),
            synced: t.provider.isSynced,
            unsynced: t.provider.unsyncedChanges,
          })),
        ).toEqual(typists.map(() => ({ status: 'connected', synced: true, unsynced: 0 }))),
      // Longer than the provider's own 30 s silence timeout (messageReconnectTimeout), after which a socket
      // that is open but never answered is replaced.
      60_000,
      'typists settled after the restarts',
    )
    const typed = typists.map((t) => Y.getState(t.doc.store, t.doc.clientID))

    // Everything every typist typed and every answered agent write is in the database.
    const lost: string[] = []
    await eventually(
      async () => {
        lost.length = 0
        const stored = (await readStored(db, [room])).get(room)!
        typists.forEach((t, i) => {
          const have = stored.vector.get(t.doc.clientID) ?? 0
          if (have < typed[i]!) lost.push(`typist ${i}: typed up to clock ${typed[i]}, stored ${have}`)
        })
        const text = plainText(stored.doc)
        for (const write of answered)
          if (!text.includes(write)) lost.push(`answered MCP write missing: ${write}`)
        trackers.forEach((tracker, i) => {
          const required = tracker.acknowledgedClockAt(killedAt - DURABLE_WITHIN_MS)
          const have = stored.vector.get(tracker.clientId) ?? 0
          if (have < required)
            lost.push(
              `kill editor ${i}: acknowledged by ${DURABLE_WITHIN_MS} ms before the kill up to ${required}, stored ${have}`,
            )
        })
        expect(lost).toEqual([])
      },
      20_000,
      'everything acknowledged stored',
    ).catch(() => {})

    const words = typed.reduce((sum, clock) => sum + clock, 0)
    reportFigure('balancer-restart', {
      instances: INSTANCES,
      typists: TYPISTS,
      typedClock: words,
      reconnects: typists.reduce((sum, t) => sum + t.closes, 0),
      answeredAgentWrites: answered.length,
      agentFailuresRetried: agentFailures,
      killEditorsAcknowledged: trackers.reduce((sum, t) => sum + t.acknowledged, 0),
      killedInstanceSockets: sockets[victim],
      lost: lost.length,
    })
    // The rehearsal means something only if typing and writing went on through every restart.
    expect(answered.length).toBeGreaterThan(INSTANCES)
    expect(typists.every((t) => t.closes > 0)).toBe(true) // every typist was handed over at least once
    expect(trackers.every((t) => t.acknowledgedClockAt(killedAt - DURABLE_WITHIN_MS) > 0)).toBe(true)
    expect(lost).toEqual([])
    await agent.close()
  }, 240_000)
})

if (SKIP_REASON) test.skip(`rolling restart behind nginx: skipped, ${SKIP_REASON}`, () => {})
