/**
 * Environment -> one typed, validated configuration object.
 *
 * This is the only module that reads `process.env`; everything else receives a `Config`.
 * A bad value stops the start with a message naming the variable and what it accepts.
 */
import { join, resolve } from 'node:path'
import { z } from 'zod'
import { SOCKET_AUTH_TIMEOUT_MS } from './collab/limits.ts'
import { COMPACT_AFTER_UPDATES, SEARCH_REFRESH_MS } from './collab/store-policy.ts'
import { AGENT_VERSION_PAUSE_MS, MIN_VERSION_INTERVAL_MS, VERSION_PAUSE_MS } from './limits.ts'

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const

/** A shorter METRICS_TOKEN could be guessed. */
export const METRICS_TOKEN_MIN_CHARS = 16
/** AUTH_SECRET signs cookies: 32 characters at least (Better Auth's own floor). */
export const AUTH_SECRET_MIN_CHARS = 32
/**
 * DRAIN_GRACE_MS's default: long enough for a balancer checking /health/ready every second or two to see
 * two failures in a row (HAProxy's `fall 2`, Kubernetes' failureThreshold), short against a systemd or
 * Kubernetes stop timeout (90 s, 30 s).
 */
export const DRAIN_GRACE_MS = 5_000

const boolFromEnv = z
  .string()
  .trim()
  .toLowerCase()
  .refine((v) => ['true', 'false', '1', '0', 'yes', 'no'].includes(v), 'expected true or false')
  .transform((v) => v === 'true' || v === '1' || v === 'yes')

const intFromEnv = (min: number, max: number) =>
  z
    .string()
    .trim()
    .regex(/^\d+$/, 'expected a whole number')
    .transform(Number)
    .pipe(z.number().int().min(min).max(max))

const envSchema = z.object({
  /** Interface to bind. Loopback by default: exposing the server is a deliberate choice. */
  HOST: z.string().trim().min(1).default('127.0.0.1'),
  /** One port serves WebSocket (editors), REST and MCP. 0 picks a free port (tests). */
  PORT: intFromEnv(0, 65_535).default(4000),
  /** Folder of the embedded database and the first-run token file. Ignored for data when DATABASE_URL is set. */
  DATA_DIR: z.string().trim().min(1).default('./.data'),
  /** postgresql://… selects PostgreSQL; unset selects the embedded PGlite in DATA_DIR. */
  DATABASE_URL: z
    .string()
    .trim()
    .regex(/^postgres(ql)?:\/\//, 'expected a postgresql:// URL')
    .optional(),
  /** redis://… lets several instances share live documents. */
  REDIS_URL: z
    .string()
    .trim()
    .regex(/^rediss?:\/\//, 'expected a redis:// URL')
    .optional(),
  LOG_LEVEL: z.enum(LOG_LEVELS).default('info'),
  /** Apply pending migrations when the server starts. */
  MIGRATE_ON_START: boolFromEnv.default(true),
  /**
   * Where the embedded database (no DATABASE_URL) runs: `worker`, its own thread, so its queries never
   * hold the event loop editors are served from; `main`, the server's thread (db/client.ts).
   */
  PGLITE_THREAD: z.enum(['worker', 'main']).default('worker'),
  /**
   * The embedded database syncs each commit to the disk before answering it (PostgreSQL's fsync, which
   * PGlite turns off by default): a store survives a power loss, not only a crash of the process. `false`
   * saves the sync (~0.4 ms per commit on this machine’s disk; more on a slow one) at the price of losing
   * what the operating system had not yet written when the power went, and of a folder that may not open
   * again after one (docs/server.md, Durability). No effect on PostgreSQL, which has its own setting.
   */
  PGLITE_FSYNC: boolFromEnv.default(true),
  /**
   * Where migrated templates of the embedded database are kept (db/pglite-template.ts): the first start on
   * a new DATA_DIR saves one after its migrations, and later starts on a new folder load it instead of
   * running initdb and every migration. `off` keeps none. Default: `collab-mcp` in the user's cache folder
   * ($XDG_CACHE_HOME, else ~/.cache). Holds no data of anyone's: the template is taken before the first
   * run's user, token and welcome document are made.
   */
  PGLITE_TEMPLATES: z.string().trim().min(1).optional(),
  XDG_CACHE_HOME: z.string().trim().min(1).optional(),
  HOME: z.string().trim().min(1).optional(),
  /**
   * Quiet period after the last change before a document is stored (ms). A store appends only the change
   * to the update log (a few hundred bytes, one INSERT), so it can be short: with the next setting it bounds
   * what a crash loses of acknowledged typing to well under a second (docs/server.md, Durability).
   */
  STORE_DEBOUNCE_MS: intFromEnv(0, 60_000).default(200),
  /** A document that keeps changing is still stored at least this often (ms). */
  STORE_MAX_DEBOUNCE_MS: intFromEnv(0, 600_000).default(600),
  /**
   * Stores append to each document's update log; after this many rows the log is merged into the
   * document's snapshot (compaction; also when the log reaches the snapshot's size, and at unload).
   */
  STORE_COMPACT_AFTER_UPDATES: intFromEnv(1, 100_000).default(COMPACT_AFTER_UPDATES),
  /**
   * How often, at most, a changing document's title and search text are rewritten (ms): search lags the
   * content by at most this. 0 rewrites them at every store (the cost follows the document's size).
   */
  SEARCH_REFRESH_MS: intFromEnv(0, 600_000).default(SEARCH_REFRESH_MS),
  /** Automatic versions of one document are at least this far apart (ms; docs/history.md). */
  VERSION_MIN_INTERVAL_MS: intFromEnv(0, 86_400_000).default(MIN_VERSION_INTERVAL_MS),
  /** People's edits become a version after this long without typing (ms; docs/history.md). */
  VERSION_PAUSE_MS: intFromEnv(0, 86_400_000).default(VERSION_PAUSE_MS),
  /** With people in the document, an agent's writes become one version after this long without one (ms). */
  VERSION_AGENT_PAUSE_MS: intFromEnv(0, 86_400_000).default(AGENT_VERSION_PAUSE_MS),
  /** How long shutdown waits for pending stores before giving up and exiting non-zero (ms). */
  SHUTDOWN_TIMEOUT_MS: intFromEnv(0, 600_000).default(30_000),
  /**
   * SIGTERM drains before it stops (ms): /health/ready answers 503 and new editor sockets are refused at
   * once, while everything already open is still served this long, so a load balancer takes the instance
   * out before it stops listening; then editors are handed over (their sockets closed, providers reconnect
   * through the balancer) and shutdown stores everything. 0 stops at once; SIGINT never waits.
   */
  DRAIN_GRACE_MS: intFromEnv(0, 600_000).default(DRAIN_GRACE_MS),
  /** Public base URL shown to people (defaults to http://HOST:PORT). */
  PUBLIC_URL: z.url().optional(),
  /** Comma-separated origins (scheme://host[:port]) whose browsers may call /mcp; others get 403. */
  MCP_ALLOWED_ORIGINS: z
    .string()
    .transform((v) =>
      v
        .split(',')
        .map((o) => o.trim().replace(/\/+$/, ''))
        .filter(Boolean),
    )
    .pipe(z.array(z.url({ message: 'expected comma-separated origins like http://localhost:6274' })))
    .optional(),
  /** Tool calls per minute per user over MCP (HTTP and stdio); 0 turns the limit off. */
  MCP_CALLS_PER_MINUTE: intFromEnv(0, 1_000_000).default(60),
  /**
   * Each user's share of the server's time for MCP calls, in percent of one event loop over a minute (a
   * burst of 0.6 s per percent); 0 turns it off (modules/mcp/infra/server-time.ts).
   */
  MCP_SERVER_SHARE_PERCENT: intFromEnv(0, 100).default(25),
  /**
   * An editor socket that authenticates no document within this many ms of opening is closed (4408):
   * each socket is a file descriptor, which the database needs too (collab/socket-gate.ts).
   */
  WS_AUTH_TIMEOUT_MS: intFromEnv(100, 600_000).default(SOCKET_AUTH_TIMEOUT_MS),
  /**
   * Most editor sockets the instance holds at once; past it upgrades are refused 503. 0: the process's
   * open-file limit less FILE_DESCRIPTORS_KEPT (2,048) kept for the database, workers and HTTP.
   */
  WS_MAX_SOCKETS: intFromEnv(0, 10_000_000).default(0),
  /** API token the stdio entry (`bun run mcp:stdio`) acts as; required there, unused by the HTTP server. */
  MCP_TOKEN: z.string().trim().regex(/^\S+$/, 'expected one API token with no spaces').optional(),
  /**
   * Secret that reads /metrics (and /health's details) with `Authorization: Bearer <it>` from anywhere.
   * Unset: only loopback peers may. At least METRICS_TOKEN_MIN_CHARS characters, no spaces.
   */
  METRICS_TOKEN: z
    .string()
    .trim()
    .regex(/^\S+$/, 'expected one secret with no spaces')
    .min(
      METRICS_TOKEN_MIN_CHARS,
      `expected at least ${METRICS_TOKEN_MIN_CHARS} characters (e.g. openssl rand -hex 32)`,
    )
    .optional(),
  /**
   * Secret that signs sign-in cookies and OAuth requests (auth/). Unset: one is generated once and kept
   * in the database, shared by every instance. At least AUTH_SECRET_MIN_CHARS characters.
   */
  AUTH_SECRET: z
    .string()
    .trim()
    .min(
      AUTH_SECRET_MIN_CHARS,
      `expected at least ${AUTH_SECRET_MIN_CHARS} characters (e.g. openssl rand -hex 32)`,
    )
    .optional(),
  /**
   * Peers whose X-Forwarded-For names the client (for the per-address sign-in and registration limits):
   * comma-separated IP addresses and/or `loopback` (the default: a TLS proxy on this machine); `none`
   * believes no one.
   */
  TRUSTED_PROXIES: z
    .string()
    .transform((v) =>
      v
        .split(',')
        .map((p) => p.trim().toLowerCase())
        .filter(Boolean),
    )
    .pipe(
      z.array(
        z
          .string()
          .regex(/^(loopback|none|[0-9a-f:.]+)$/, 'expected comma-separated IP addresses, loopback or none'),
      ),
    )
    .optional(),
})

export type Config = {
  host: string
  port: number
  dataDir: string
  databaseUrl: string | undefined
  redisUrl: string | undefined
  logLevel: (typeof LOG_LEVELS)[number]
  migrateOnStart: boolean
  /** Absent (test configs): `worker`. */
  pgliteThread?: 'worker' | 'main'
  /** Absent (test configs): true, the embedded database syncs its commits (PGLITE_FSYNC). */
  pgliteFsync?: boolean
  /** The folder of migrated templates of the embedded database (PGLITE_TEMPLATES); absent: none kept. */
  pgliteTemplates?: string
  storeDebounceMs: number
  storeMaxDebounceMs: number
  /** Absent (test configs): COMPACT_AFTER_UPDATES. */
  storeCompactAfterUpdates?: number
  /** Absent (test configs): SEARCH_REFRESH_MS. */
  searchRefreshMs?: number
  /** Absent (all but tests): LIVE_MERGE_STRUCTS (store-policy.ts). */
  liveMergeStructs?: number
  /** Absent (test configs): MIN_VERSION_INTERVAL_MS, VERSION_PAUSE_MS and AGENT_VERSION_PAUSE_MS (limits.ts). */
  versionMinIntervalMs?: number
  versionPauseMs?: number
  versionAgentPauseMs?: number
  shutdownTimeoutMs: number
  /** Absent (test configs): 0, no drain. */
  drainGraceMs?: number
  publicUrl: string | undefined
  mcpAllowedOrigins: string[]
  /** Absent (test configs) means no limit; loadConfig always sets it (default 60). */
  mcpCallsPerMinute?: number
  /** Each user's share of server time for MCP calls, percent; 0 or absent: no share is kept. */
  mcpServerSharePercent?: number
  /** Only the stdio entry reads it. */
  mcpToken?: string
  /** METRICS_TOKEN; absent: /metrics answers loopback peers only. */
  metricsToken?: string
  /** AUTH_SECRET; absent: generated once and kept in the database. */
  authSecret?: string
  /** TRUSTED_PROXIES; absent: ['loopback']. */
  trustedProxies?: string[]
  /** WS_AUTH_TIMEOUT_MS; absent (test configs): SOCKET_AUTH_TIMEOUT_MS. */
  wsAuthTimeoutMs?: number
  /** WS_MAX_SOCKETS; absent or 0: from the open-file limit (socket-gate.ts defaultMaxSockets). */
  wsMaxSockets?: number
}

export class ConfigError extends Error {
  override name = 'ConfigError'
}

/**
 * The environment a tool this server runs (pg_dump, pg_restore) starts with: this process's own (its
 * PATH, locale, PGSSLMODE…), plus `extra`. Passed on whole, never read for settings.
 */
export function toolEnvironment(extra: Record<string, string> = {}): Record<string, string> {
  const inherited: Record<string, string> = {}
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined) inherited[key] = value
  return { ...inherited, ...extra }
}

/** PGLITE_TEMPLATES as a folder: `off` is none; unset is collab-mcp in the user's cache folder, if one is known. */
function templatesFolder(e: { PGLITE_TEMPLATES?: string; XDG_CACHE_HOME?: string; HOME?: string }) {
  if (e.PGLITE_TEMPLATES) return e.PGLITE_TEMPLATES === 'off' ? undefined : resolve(e.PGLITE_TEMPLATES)
  const cache = e.XDG_CACHE_HOME ?? (e.HOME ? join(e.HOME, '.cache') : undefined)
  return cache ? join(resolve(cache), 'collab-mcp') : undefined
}

/** Reads and validates the environment. Empty strings count as unset. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const present = Object.fromEntries(
    Object.keys(envSchema.shape)
      .map((key) => [key, env[key]] as const)
      .filter(([, value]) => value !== undefined && value.trim() !== ''),
  )
  const parsed = envSchema.safeParse(present)
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => {
      const name = String(issue.path[0] ?? 'environment')
      return `${name}=${JSON.stringify(present[name] ?? '')}: ${issue.message}`
    })
    throw new ConfigError(`Invalid configuration:\n  ${lines.join('\n  ')}`)
  }
  const e = parsed.data
  return {
    host: e.HOST,
    port: e.PORT,
    dataDir: resolve(e.DATA_DIR),
    databaseUrl: e.DATABASE_URL,
    redisUrl: e.REDIS_URL,
    logLevel: e.LOG_LEVEL,
    migrateOnStart: e.MIGRATE_ON_START,
    pgliteThread: e.PGLITE_THREAD,
    pgliteFsync: e.PGLITE_FSYNC,
    pgliteTemplates: templatesFolder(e),
    storeDebounceMs: e.STORE_DEBOUNCE_MS,
    storeMaxDebounceMs: e.STORE_MAX_DEBOUNCE_MS,
    storeCompactAfterUpdates: e.STORE_COMPACT_AFTER_UPDATES,
    searchRefreshMs: e.SEARCH_REFRESH_MS,
    versionMinIntervalMs: e.VERSION_MIN_INTERVAL_MS,
    versionPauseMs: e.VERSION_PAUSE_MS,
    versionAgentPauseMs: e.VERSION_AGENT_PAUSE_MS,
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    drainGraceMs: e.DRAIN_GRACE_MS,
    publicUrl: e.PUBLIC_URL?.replace(/\/+$/, ''),
    mcpAllowedOrigins: e.MCP_ALLOWED_ORIGINS ?? [],
    mcpCallsPerMinute: e.MCP_CALLS_PER_MINUTE,
    mcpServerSharePercent: e.MCP_SERVER_SHARE_PERCENT,
    mcpToken: e.MCP_TOKEN,
    metricsToken: e.METRICS_TOKEN,
    authSecret: e.AUTH_SECRET,
    trustedProxies: e.TRUSTED_PROXIES,
    wsAuthTimeoutMs: e.WS_AUTH_TIMEOUT_MS,
    wsMaxSockets: e.WS_MAX_SOCKETS,
  }
}
