/**
 * Sockets that never authenticate (issue 24; collab/socket-gate.ts). Found on 2026-12-05: every editor
 * socket is a file descriptor of the server process, and nothing bounded those that never sent a token, nor
 * how long they stayed. One client holding ~20,000 of them (no token needed, ~4 KB of memory each) used up
 * the process's 20,000 files: the embedded database then failed to create its files ("could not create file
 * base/5/…_fsm: File exists"), stores of others' typing failed until their document changed again, and
 * `/health` answered 503.
 *
 * Here the real server process runs under a file limit of FILE_LIMIT (prlimit), so the attack needs only a
 * few thousand sockets, from a process of its own (bench/attacks/idle-sockets.ts), while another client types
 * and a probe asks /health. Asserted: the attacker has at most MAX_PENDING_SOCKETS_PER_ADDRESS sockets open at
 * once and each is closed with the reason once WS_AUTH_TIMEOUT_MS passes; the rest are refused at the upgrade
 * (503, the reason in the body); /health answers 200 throughout; every keystroke reaches the other editor;
 * what was typed is stored; a socket that authenticates is served and kept. Then the instance's ceiling
 * (WS_MAX_SOCKETS) on a server of its own.
 */
import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { connectProvider } from '@collab/test-support/provider'
import { WebSocketStatus } from '@hocuspocus/provider'
import { MAX_PENDING_SOCKETS_PER_ADDRESS } from '../../collab/limits.ts'
import {
  AUTH_TIMEOUT_CLOSE_CODE,
  authTimeoutReason,
  FULL_REFUSAL,
  PENDING_REFUSAL,
} from '../../collab/socket-gate.ts'
import { newRoom, startProbe, startTyping, useMeasuredServer } from './red-team-support.ts'

/** The server's open-file limit (soft and hard): the attack's sockets past it, before the gate, broke the database. */
const FILE_LIMIT = 2_600
/** More sockets than the file limit leaves room for. */
const ATTACK_SOCKETS = 3_000
const AUTH_TIMEOUT_MS = 2_000
const ATTACKER = join(import.meta.dir, '../../../../../bench/attacks/idle-sockets.ts')

/** What an upgrade request from this process is answered, when it is refused before opening. */
async function upgradeAnswer(url: string): Promise<{ status: number; body: string }> {
  const response = await fetch(url, {
    headers: {
      Upgrade: 'websocket',
      Connection: 'Upgrade',
      'Sec-WebSocket-Version': '13',
      'Sec-WebSocket-Key': btoa(crypto.randomUUID().slice(0, 16)),
    },
  })
  return { status: response.status, body: await response.text() }
}

/** A raw socket that sends nothing; resolves once open, with how it closes. */
async function silentSocket(url: string) {
  const socket = new WebSocket(url.replace('http', 'ws'))
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    socket.onclose = (event) => resolve({ code: event.code, reason: event.reason })
  })
  await new Promise((resolve, reject) => {
    socket.onopen = resolve
    socket.onerror = () => reject(new Error('refused'))
  })
  return { socket, closed }
}

/** The real server process under a file limit of FILE_LIMIT, with a short authentication timeout. */
const useLimitedServer = (env: Record<string, string> = {}) =>
  useMeasuredServer({
    env: { WS_AUTH_TIMEOUT_MS: String(AUTH_TIMEOUT_MS), ...env },
    wrap: ['prlimit', `--nofile=${FILE_LIMIT}:${FILE_LIMIT}`, '--'],
  })

describe.skipIf(!Bun.which('prlimit'))('red team: sockets that never authenticate', () => {
  const limited = useLimitedServer({})

  test('one client opening more idle sockets than the file limit allows: refused past the per-address bound, closed at the timeout; others are served and stored', async () => {
    const { server, token } = limited
    const room = await newRoom(server.url, token, 'Typed meanwhile')
    const typing = await startTyping(server.url, room, token)
    const probe = await startProbe(server.url, server.proc.pid)
    const attacker = Bun.spawn(
      ['bun', ATTACKER, server.url, String(ATTACK_SOCKETS), String((AUTH_TIMEOUT_MS * 3) / 1000)],
      {
        stdout: 'pipe',
        stderr: 'inherit',
      },
    )
    const outcome = JSON.parse(await new Response(attacker.stdout).text()) as {
      opened: number
      mostOpen: number
      refused: number
      closedByServer: number
      reasons: Record<string, number>
    }
    await attacker.exited
    const seen = await probe.stop()
    const typed = await typing.stop()
    // At most the address's waiting bound at once (more over the attack, as the timeout closes the first).
    expect(outcome.mostOpen).toBeLessThanOrEqual(MAX_PENDING_SOCKETS_PER_ADDRESS)
    expect(outcome.mostOpen).toBeGreaterThan(0)
    expect(outcome.opened + outcome.refused).toBe(ATTACK_SOCKETS)
    expect(outcome.reasons[authTimeoutReason(AUTH_TIMEOUT_MS)]).toBe(outcome.opened)
    expect(seen.statuses).toEqual([200])
    expect(typed.keystrokes).toBeGreaterThan(0)
    expect(typed.unseen).toBe(0)
    // The database still writes (a new document; before, it failed to create files), and no store failed.
    expect(await newRoom(server.url, token, 'After the attack')).toBeTruthy()
    expect(server.stderr()).not.toContain('store failed')
    expect(server.stderr()).not.toContain('could not create file')
  }, 120_000)

  test('a refused upgrade says why (503); a socket that authenticates stays open past the timeout', async () => {
    const { server, token } = limited
    const waiting = await Promise.all(
      Array.from({ length: MAX_PENDING_SOCKETS_PER_ADDRESS }, () => silentSocket(server.url)),
    )
    const refused = await upgradeAnswer(server.url)
    expect(refused.status).toBe(503)
    expect(refused.body).toBe(PENDING_REFUSAL)
    const closes = await Promise.all(waiting.map((w) => w.closed))
    expect(closes).toEqual(
      waiting.map(() => ({ code: AUTH_TIMEOUT_CLOSE_CODE, reason: authTimeoutReason(AUTH_TIMEOUT_MS) })),
    )
    const room = await newRoom(server.url, token, 'Kept open')
    const editor = connectProvider(server.url, room, token)
    const socketCloses: number[] = []
    editor.provider.on('close', ({ event }: { event: CloseEvent }) => socketCloses.push(event.code))
    try {
      await editor.ready
      await Bun.sleep(AUTH_TIMEOUT_MS + 1_000)
      expect(socketCloses).toEqual([])
      expect(editor.provider.configuration.websocketProvider.status).toBe(WebSocketStatus.Connected)
    } finally {
      editor.destroy()
    }
  }, 60_000)
})

describe.skipIf(!Bun.which('prlimit'))('the instance holds at most WS_MAX_SOCKETS editor sockets', () => {
  const limited = useLimitedServer({ WS_MAX_SOCKETS: '3' })

  test('past the ceiling every upgrade is refused 503 with the reason; a closed socket lets the next one in', async () => {
    const { server, token } = limited
    const room = await newRoom(server.url, token, 'Full')
    const editors = Array.from({ length: 3 }, () => connectProvider(server.url, room, token))
    try {
      await Promise.all(editors.map((e) => e.ready))
      const refused = await upgradeAnswer(server.url)
      expect(refused).toEqual({ status: 503, body: FULL_REFUSAL })
      editors.shift()!.destroy()
      const next = connectProvider(server.url, room, token)
      editors.push(next)
      await next.ready
      expect(next.provider.isSynced).toBe(true)
    } finally {
      for (const editor of editors) editor.destroy()
    }
  }, 60_000)
})
