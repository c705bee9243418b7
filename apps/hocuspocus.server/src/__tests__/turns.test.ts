/**
 * turns.ts: the event loop's slices of work taken in turns. Two things a keystroke on another document
 * depends on (issue 30): jobs under way at once run one slice per turn, not one each; and what a message
 * read from a socket queued (Hocuspocus broadcasts a change from a setImmediate) runs before the next
 * slice. Both fail on the old rule, where each job yielded with its own setImmediate.
 */
import { afterEach, describe, expect, test } from 'bun:test'
import type { ServerWebSocket } from 'bun'
import { nextTurn, runInSlices, SLICE_MS, turnsWaiting } from '../turns.ts'

const busy = (ms: number) => {
  const end = performance.now() + ms
  while (performance.now() < end) {}
}

/** A job of `slices` slices, each SLICE_MS of work, logging its name as each starts. */
async function job(name: string, slices: number, log: string[]) {
  for (let i = 0; i < slices; i++) {
    log.push(name)
    busy(SLICE_MS)
    await nextTurn()
  }
}

afterEach(async () => {
  while (turnsWaiting() > 0) await Bun.sleep(5)
})

describe('turns of the event loop', () => {
  test('jobs under way at once run one slice per turn, in the order they asked', async () => {
    const log: string[] = []
    // A marker immediate queued in each turn: it counts the turns between slices.
    let running = true
    const tick = () => {
      if (!running) return
      log.push('|')
      setImmediate(tick)
    }
    setImmediate(tick)
    await Promise.all([job('a', 4, log), job('b', 4, log), job('c', 4, log)])
    running = false
    // Each job's first slice runs when it starts; after them there is always a turn of the loop between
    // two slices, never two jobs' slices back to back.
    const turns = log.join('').replace(/\|+/g, '|')
    expect(turns.startsWith('abc|')).toBe(true)
    expect(turns.slice(3)).not.toMatch(/[abc][abc]/)
    // Round robin: a, b, c take turns in the order they asked.
    expect(turns.slice(3).replaceAll('|', '')).toBe('abcabcabc')
  })

  test('a message read from a socket has what it queued run before the next slice', async () => {
    const log: string[] = []
    const opened: { socket?: ServerWebSocket<unknown> } = {}
    const server = Bun.serve({
      port: 0,
      fetch(request, upgrade) {
        return upgrade.upgrade(request) ? undefined : new Response('no', { status: 400 })
      },
      websocket: {
        open(socket) {
          opened.socket = socket
        },
        message(socket, message) {
          log.push(`read ${message}`)
          // As Hocuspocus broadcasts a change: from an immediate queued while the message is handled.
          setImmediate(() => {
            log.push(`sent ${message}`)
            socket.send(message)
          })
        },
      },
    })
    // The messages come from another process, as editors' do: its timers are not this event loop's.
    const sender = Bun.spawn(
      [
        'bun',
        '-e',
        `const socket = new WebSocket('ws://127.0.0.1:${server.port}')
         await new Promise((resolve) => { socket.onopen = resolve })
         await new Promise((resolve) => { socket.onmessage = resolve })
         for (let n = 0; n < 60; n++) { socket.send(String(n)); await Bun.sleep(3 + Math.random() * 4) }
         socket.close()`,
      ],
      { stdout: 'ignore', stderr: 'inherit' },
    )
    try {
      while (!opened.socket) await Bun.sleep(5)
      // Two jobs under way while the messages arrive; the first message goes once they are.
      const jobs = Promise.all([job('a', 150, log), job('b', 150, log)])
      opened.socket.send('go')
      await sender.exited
      await jobs
      const reads = log.filter((entry) => entry.startsWith('read')).length
      expect(reads).toBeGreaterThan(5)
      // A message read while a slice ran is sent on before any further slice starts; one read in the
      // instant between two turns (the release already queued) waits for one slice. Never for both jobs'
      // (the old rule: each job's queued slice ran before the broadcast).
      const slicesWaited: number[] = []
      for (let i = 0; i < log.length; i++) {
        if (!log[i]!.startsWith('read')) continue
        const sent = log.indexOf(`sent ${log[i]!.slice(5)}`, i)
        expect(sent).toBeGreaterThan(i)
        slicesWaited.push(log.slice(i + 1, sent).filter((entry) => entry === 'a' || entry === 'b').length)
      }
      expect(Math.max(...slicesWaited)).toBeLessThanOrEqual(1)
      expect(slicesWaited.filter((n) => n === 0).length).toBeGreaterThan(slicesWaited.length / 2)
    } finally {
      sender.kill()
      server.stop(true)
    }
  })

  test('runInSlices returns the value and the time spent working, and stops when told', async () => {
    const steps = function* () {
      for (let i = 0; i < 5; i++) {
        busy(SLICE_MS)
        yield
      }
      return 'done'
    }
    const whole = await runInSlices(steps())
    expect(whole?.value).toBe('done')
    expect(whole!.busyMs).toBeGreaterThanOrEqual(5 * SLICE_MS)
    let turnsTaken = 0
    const stopped = await runInSlices(steps(), () => ++turnsTaken < 2)
    expect(stopped).toBeNull()
    expect(turnsTaken).toBe(2)
    await expect(
      runInSlices(steps(), () => {
        throw new Error('cancelled')
      }),
    ).rejects.toThrow('cancelled')
  })
})
