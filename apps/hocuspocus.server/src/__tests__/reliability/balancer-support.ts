/**
 * The front door of the balancer rehearsals (balancer-*.test.ts): server processes on PostgreSQL and Redis
 * behind a real nginx running the repository's recipe (deploy/nginx/collab.conf with collab-proxy.conf),
 * TLS with a certificate made here by openssl and trusted by the clients, and editors that connect through
 * it as the web editor does. Needs TEST_DATABASE_URL, TEST_REDIS_URL, nginx and openssl (.ci/run installs
 * nginx); BALANCER_SKIP_REASON says which is missing.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createTestDatabase, type TestDatabase } from '@collab/test-support/database'
import { readCounter } from '@collab/test-support/metrics'
import { REPO_DIR, type ServerProcess, spawnServer } from '@collab/test-support/process'
import { editorSocketUrl } from '@collab/test-support/provider'
import { eventually, TEST_REDIS_URL, TWO_INSTANCES } from '@collab/test-support/server'
import { HocuspocusProvider, HocuspocusProviderWebsocket } from '@hocuspocus/provider'
import * as Y from 'yjs'
import { firstRunToken, freePort, stopProcess } from './faults-support.ts'

export const NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx', '/usr/local/sbin/nginx'].find((p) => existsSync(p))
const HAS_OPENSSL = (() => {
  try {
    execFileSync('openssl', ['version'], { stdio: 'pipe' })
    return true
  } catch {
    return false
  }
})()
export const BALANCER_SKIP_REASON = !TWO_INSTANCES
  ? 'needs TEST_DATABASE_URL and TEST_REDIS_URL'
  : !NGINX
    ? 'needs nginx (apt-get install nginx)'
    : !HAS_OPENSSL
      ? 'needs openssl'
      : undefined

export const DEPLOY_NGINX = join(REPO_DIR, 'deploy/nginx')

/** The recipe's collab.conf as an operator adapts it: the instances' ports, their listen ports, the certificate. */
export function renderRecipe(opts: {
  upstreams: number[]
  plainPort: number
  tlsPort: number
  dir: string
}): string {
  let conf = readFileSync(join(DEPLOY_NGINX, 'collab.conf'), 'utf8')
  const servers = opts.upstreams
    .map((p) => `    server 127.0.0.1:${p} max_fails=1 fail_timeout=5s;`)
    .join('\n')
  conf = conf.replace(/(upstream collab \{\n)(?:\s*server [^\n]*\n)+/, `$1${servers}\n`)
  conf = conf.replace(/^\s*listen \[::\]:\d+[^\n]*\n/gm, '') // loopback IPv4 only here
  conf = conf.replace(/listen 80;/, `listen 127.0.0.1:${opts.plainPort};`)
  conf = conf.replace(/listen 443 ssl;/, `listen 127.0.0.1:${opts.tlsPort} ssl;`)
  conf = conf.replace(/ssl_certificate\s+\S+;/, `ssl_certificate ${join(opts.dir, 'cert.pem')};`)
  conf = conf.replace(/ssl_certificate_key\s+\S+;/, `ssl_certificate_key ${join(opts.dir, 'key.pem')};`)
  conf = conf.replace(/include \S+collab-proxy\.conf;/, `include ${join(DEPLOY_NGINX, 'collab-proxy.conf')};`)
  for (const must of [`127.0.0.1:${opts.tlsPort} ssl`, join(DEPLOY_NGINX, 'collab-proxy.conf'), 'cert.pem'])
    if (!conf.includes(must))
      throw new Error(`deploy/nginx/collab.conf no longer has what the test adapts: ${must}`)
  return conf
}

/** Resolves once something accepts TCP connections on `port` (loopback). */
function listening(port: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    socket.once('connect', () => {
      socket.destroy()
      resolve()
    })
    socket.once('error', reject)
  })
}

/** nginx of its own: a temporary prefix, its own pid, logs and temp folders, in the foreground. */
async function startNginx(dir: string, recipe: string, tlsPort: number) {
  const user = execFileSync('id', ['-un']).toString().trim()
  const group = execFileSync('id', ['-gn']).toString().trim()
  const temps = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']
  for (const sub of temps) mkdirSync(join(dir, 'tmp', sub), { recursive: true })
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
      ...temps.map((k) => `  ${k}_temp_path ${join(dir, 'tmp', k)};`),
      `  include ${join(dir, 'collab.conf')};`,
      '}',
      '',
    ].join('\n'),
  )
  const args = ['-p', dir, '-c', join(dir, 'nginx.conf'), '-e', join(dir, 'error.log')]
  execFileSync(NGINX!, [...args, '-t'], { stdio: 'pipe' }) // the recipe must pass nginx's own check
  const proc = Bun.spawn([NGINX!, ...args], { stdin: 'ignore', stdout: 'ignore', stderr: 'pipe' })
  await eventually(() => listening(tlsPort), 15_000, 'nginx listening')
  return proc
}

/** A certificate for 127.0.0.1, made now (never committed); returns its PEM, which the clients trust. */
function makeCertificate(dir: string): string {
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
  return readFileSync(join(dir, 'cert.pem'), 'utf8')
}

/** An editor through the front door, as the web editor has it: reconnecting whenever its socket closes. */
export type Typist = {
  provider: HocuspocusProvider
  socket: HocuspocusProviderWebsocket
  doc: Y.Doc
  /** How many times its connection closed (each is a reconnection). */
  closes: number
  destroy(): void
}

export type Front = {
  /** https://127.0.0.1:<port>: nginx's TLS side, the only address the clients use. */
  url: string
  /** nginx's plain-HTTP side (it redirects to https). */
  plainPort: number
  /** Each instance's own port (loopback, behind nginx). */
  ports: number[]
  /** Each instance's process; undefined while stopped. */
  instances: Array<ServerProcess | undefined>
  db: TestDatabase
  /** The first start's read+write token. */
  token: string
  /** The front door's certificate (PEM), which the clients trust. */
  ca: string
  /** fetch trusting the front door's certificate. */
  fetch: typeof fetch
  /** The environment of the instance on `port` (what the recipe's collab.env and unit give it). */
  env(port: number): Record<string, string>
  /** Starts instance `i` again on its port (`env` added to its environment) and waits until it is ready. */
  start(i: number, env?: Record<string, string>): Promise<ServerProcess>
  /** Connects an editor to `room` through the front door. */
  connect(room: string, opts?: { messageReconnectTimeout?: number }): Typist
  stop(): Promise<void>
}

/**
 * `instances` server processes on a fresh PostgreSQL database and the test Redis, behind nginx on free
 * ports. `env` is added to every instance's environment.
 */
export async function startFront(opts: { instances: number; env?: Record<string, string> }): Promise<Front> {
  const db = await createTestDatabase()
  const dir = mkdtempSync(join(tmpdir(), 'balancer-'))
  const instances: Array<ServerProcess | undefined> = []
  const typists: Typist[] = []
  let nginx: ReturnType<typeof Bun.spawn> | undefined
  const stop = async () => {
    for (const t of typists) t.destroy()
    await Promise.all(instances.map((instance) => stopProcess(instance)))
    if (nginx && nginx.exitCode === null) {
      nginx.kill('SIGQUIT')
      await nginx.exited
    }
    await db.cleanup()
    rmSync(dir, { recursive: true, force: true })
  }
  try {
    const ca = makeCertificate(dir)
    const tlsFetch = ((url: string | URL | Request, init?: RequestInit) =>
      fetch(url, { ...init, tls: { ca } } as RequestInit)) as typeof fetch
    /** Bun's WebSocket, trusting the test's certificate. */
    class TlsWebSocket extends WebSocket {
      constructor(url: string | URL, protocols?: string | string[]) {
        super(url, { protocols, tls: { ca } } as unknown as string[])
      }
    }
    const ports: number[] = []
    for (let i = 0; i < opts.instances; i++) ports.push(await freePort())
    const plainPort = await freePort()
    const tlsPort = await freePort()
    const url = `https://127.0.0.1:${tlsPort}`
    const env = (port: number): Record<string, string> => ({
      DATA_DIR: db.dataDir,
      DATABASE_URL: db.databaseUrl ?? '',
      REDIS_URL: TEST_REDIS_URL ?? '',
      PORT: String(port),
      PUBLIC_URL: url,
      LOG_LEVEL: 'warn',
      MCP_CALLS_PER_MINUTE: '0',
      ...opts.env,
    })
    // The first start makes the first user and token; the others find the database ready.
    instances[0] = await spawnServer(env(ports[0]!))
    await Promise.all(
      ports.slice(1).map(async (port, i) => {
        instances[i + 1] = await spawnServer({ ...env(port), MIGRATE_ON_START: 'false' })
      }),
    )
    nginx = await startNginx(dir, renderRecipe({ upstreams: ports, plainPort, tlsPort, dir }), tlsPort)
    const token = firstRunToken(db.dataDir)
    return {
      url,
      plainPort,
      ports,
      instances,
      db,
      token,
      ca,
      fetch: tlsFetch,
      env,
      async start(i, extra = {}) {
        const instance = await spawnServer({ ...env(ports[i]!), MIGRATE_ON_START: 'false', ...extra })
        instances[i] = instance
        await eventually(async () =>
          expectStatus(await fetch(`http://127.0.0.1:${ports[i]}/health/ready`), 200),
        )
        return instance
      },
      connect(room, { messageReconnectTimeout } = {}) {
        const doc = new Y.Doc()
        const socket = new HocuspocusProviderWebsocket({
          url: editorSocketUrl(url),
          WebSocketPolyfill: TlsWebSocket,
          delay: 100,
          minDelay: 100,
          maxDelay: 1_000,
          maxAttempts: 0,
          ...(messageReconnectTimeout ? { messageReconnectTimeout } : {}),
        })
        const provider = new HocuspocusProvider({
          websocketProvider: socket,
          name: room,
          document: doc,
          token,
        })
        provider.attach()
        const typist: Typist = {
          provider,
          socket,
          doc,
          closes: 0,
          destroy() {
            provider.destroy()
            socket.destroy()
          },
        }
        provider.on('close', () => typist.closes++)
        typists.push(typist)
        return typist
      },
      stop,
    }
  } catch (error) {
    await stop()
    throw error
  }
}

function expectStatus(response: Response, status: number): void {
  if (response.status !== status) throw new Error(`expected ${status}, got ${response.status}`)
}

/** Synced, with nothing it sent left unacknowledged. */
export const settled = (t: Typist) => t.provider.isSynced && t.provider.unsyncedChanges === 0

/** Each open editor socket an instance holds, read from its own /metrics (loopback peers may read it). */
export async function socketsPerInstance(front: Front): Promise<number[]> {
  return Promise.all(
    front.ports.map(async (port, i) => {
      if (!front.instances[i]) return 0
      return readCounter(`http://127.0.0.1:${port}`, 'collab_websocket_connections')
    }),
  )
}
