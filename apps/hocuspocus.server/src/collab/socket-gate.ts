/**
 * Which editor sockets the instance takes, before Hocuspocus sees them (server.ts asks at the upgrade and
 * tells it each open and close). Every socket is a file descriptor of the process, and so is every file
 * the embedded database opens: one client holding ~20,000 sockets that never authenticate (no token needed,
 * ~4 KB of memory each) used up the process's file limit here, after which PGlite could not create its
 * files (`could not create file "base/5/…_fsm": File exists`), stores failed until the document changed
 * again and `/health` answered 503 (2026-12-05, issue 24). Three bounds:
 *
 * - A socket must authenticate a document within `authTimeoutMs` of opening (providers send their token at
 *   once), else it is closed (4408) with the reason.
 * - At most MAX_PENDING_SOCKETS_PER_ADDRESS sockets of one client address wait to authenticate; one more is
 *   refused at the upgrade (503, Retry-After).
 * - The instance's sockets in all stay under `maxSockets` (by default the file limit less
 *   FILE_DESCRIPTORS_KEPT for the database, its thread, workers and HTTP): past it every upgrade is refused
 *   503, which a balancer passes to another instance.
 */
import { readFileSync } from 'node:fs'
import { FILE_DESCRIPTORS_KEPT, MAX_PENDING_SOCKETS_PER_ADDRESS } from './limits.ts'

/** Close code of a socket that authenticated nothing in time (Hocuspocus's "connection timeout"). */
export const AUTH_TIMEOUT_CLOSE_CODE = 4408
export const authTimeoutReason = (ms: number) =>
  `no document authenticated within ${ms / 1000} s of connecting: send the token as soon as the socket opens`
export const PENDING_REFUSAL =
  'too many connections from your address are waiting to authenticate; authenticate the open ones, then connect again'
export const FULL_REFUSAL = 'this instance has as many connections open as it can hold; connect again shortly'

/** What the gate needs of a socket: what it closes and whether a document on it authenticated. */
export type GatedSocket = { close(code: number, reason: string): void }

type Pending = { address: string; timer: ReturnType<typeof setTimeout> }

/** Why the gate refused or closed a socket: the metric's label for it. */
export type GateRefusal = 'sockets_full' | 'sockets_pending' | 'auth_timeout'

/**
 * The process's soft limit on open files (Linux's /proc/self/limits), or undefined where it cannot be read.
 */
export function openFileLimit(): number | undefined {
  try {
    const line = readFileSync('/proc/self/limits', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('Max open files'))
    const soft = line?.trim().split(/\s+/)[3]
    if (!soft || soft === 'unlimited') return undefined
    const value = Number(soft)
    return Number.isFinite(value) && value > 0 ? value : undefined
  } catch {
    return undefined
  }
}

/**
 * The default ceiling of sockets: the file limit less what is kept for everything else (at least 64);
 * 60,000 where the limit cannot be read (not Linux) or is unlimited.
 */
export function defaultMaxSockets(limit = openFileLimit()): number {
  return limit === undefined ? 60_000 : Math.max(64, limit - FILE_DESCRIPTORS_KEPT)
}

export class SocketGate {
  private open = 0
  private readonly pending = new Map<GatedSocket, Pending>()
  private readonly pendingByAddress = new Map<string, Set<GatedSocket>>()

  constructor(
    private readonly options: {
      /** A socket that authenticates no document within this is closed (ms). */
      authTimeoutMs: number
      maxSockets: number
      /** Whether a document on the socket authenticated (UserInflow knows its user). */
      authenticated: (socket: GatedSocket) => boolean
      /** Each refusal and timeout, by its `collab_editor_refusals_total` kind. */
      onRefused?: (kind: GateRefusal) => void
    },
  ) {}

  /** Sockets open now, and those of them still waiting to authenticate (metrics, tests). */
  counts(): { open: number; pending: number } {
    return { open: this.open, pending: this.pending.size }
  }

  /** Why an upgrade from `address` is refused, or undefined when it may open. */
  refusal(address: string): string | undefined {
    if (this.open >= this.options.maxSockets) {
      this.options.onRefused?.('sockets_full')
      return FULL_REFUSAL
    }
    if ((this.pendingByAddress.get(address)?.size ?? 0) >= MAX_PENDING_SOCKETS_PER_ADDRESS) {
      // Those that authenticated since they opened no longer wait.
      for (const socket of this.pendingByAddress.get(address) ?? [])
        if (this.options.authenticated(socket)) this.unpend(socket)
      if ((this.pendingByAddress.get(address)?.size ?? 0) >= MAX_PENDING_SOCKETS_PER_ADDRESS) {
        this.options.onRefused?.('sockets_pending')
        return PENDING_REFUSAL
      }
    }
    return undefined
  }

  /** A socket from `address` opened: counted, and closed unless it authenticates in time. */
  opened(socket: GatedSocket, address: string): void {
    this.open++
    const waiting = this.pendingByAddress.get(address) ?? new Set<GatedSocket>()
    this.pendingByAddress.set(address, waiting)
    waiting.add(socket)
    const timer = setTimeout(() => {
      if (!this.pending.has(socket)) return
      this.unpend(socket)
      if (this.options.authenticated(socket)) return
      this.options.onRefused?.('auth_timeout')
      socket.close(AUTH_TIMEOUT_CLOSE_CODE, authTimeoutReason(this.options.authTimeoutMs))
    }, this.options.authTimeoutMs)
    timer.unref?.()
    this.pending.set(socket, { address, timer })
  }

  closed(socket: GatedSocket): void {
    this.open = Math.max(0, this.open - 1)
    this.unpend(socket)
  }

  private unpend(socket: GatedSocket): void {
    const entry = this.pending.get(socket)
    if (!entry) return
    clearTimeout(entry.timer)
    this.pending.delete(socket)
    const waiting = this.pendingByAddress.get(entry.address)
    waiting?.delete(socket)
    if (waiting?.size === 0) this.pendingByAddress.delete(entry.address)
  }
}
