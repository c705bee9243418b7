/**
 * Start time (issue 30): from spawning `bun src/main.ts` on an existing PGlite folder to its first `/health`
 * answer of 200, beside a floor measured in the same run: a bare `Bun.serve` process answering `/health`
 * (what any Bun server pays: the runtime's start and a listening socket). Runs alternate, ours and the
 * floor, so a change in the machine's load hits both. The process's CPU time at that answer (all its
 * threads: the main thread, PGlite's, WebAssembly compilation) is reported beside the wall time: on a shared
 * machine it moves less than the wall time does.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { APP_DIR, REPO_DIR } from '@collab/test-support/process'
import { summarize } from './stats.ts'
import type { Row } from './types.ts'

/** What the floor runs: a listening Bun.serve that answers /health, and the line spawnServer waits for. */
const FLOOR_SCRIPT = `const s = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => Response.json({ status: 'ok' }) });
process.stderr.write('listening on http://127.0.0.1:' + s.port + '\\n')`

/** How long one start may take before the run gives up on it. */
const START_TIMEOUT_MS = 120_000

/** CPU time (user + system, all threads) of a process so far, in ms. */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100
}

/**
 * Spawns `command`, polls /health on the port it prints until it answers 200 and returns the time from the
 * spawn and the CPU time then. The port is read from the "listening on" line the server prints.
 */
async function timeToHealth(
  command: string[],
  env: Record<string, string | undefined>,
): Promise<{ ms: number; cpuMs: number }> {
  const started = performance.now()
  const proc = Bun.spawn(command, {
    cwd: REPO_DIR,
    env: { ...process.env, HOST: '127.0.0.1', PORT: '0', ...env },
    stdin: 'ignore',
    stdout: 'ignore',
    stderr: 'pipe',
  })
  try {
    const reader = proc.stderr.getReader()
    const decoder = new TextDecoder()
    let text = ''
    let url: string | undefined
    while (!url) {
      if (performance.now() - started > START_TIMEOUT_MS)
        throw new Error(`no start within ${START_TIMEOUT_MS} ms`)
      const { value, done } = await reader.read()
      if (done) throw new Error(`exited before listening:\n${text.slice(-2_000)}`)
      text += decoder.decode(value)
      url = /listening on (http:\/\/\S+)/.exec(text)?.[1]
    }
    void (async () => {
      while (!(await reader.read()).done) {} // keep the pipe drained
    })()
    for (;;) {
      const status = await fetch(`${url}/health`).then(
        (r) => r.arrayBuffer().then(() => r.status),
        () => 0,
      )
      if (status === 200) return { ms: performance.now() - started, cpuMs: cpuMs(proc.pid) }
      if (performance.now() - started > START_TIMEOUT_MS)
        throw new Error(`/health not 200 within ${START_TIMEOUT_MS} ms`)
      await Bun.sleep(5)
    }
  } finally {
    proc.kill('SIGTERM')
    await Promise.race([proc.exited, Bun.sleep(15_000).then(() => proc.kill('SIGKILL'))])
  }
}

/**
 * Starts the server `runs` times on `env`'s existing data folder (stopped in between), alternating with the
 * floor. `documents` names what the folder holds, for the row's size.
 */
export async function measureStart(
  env: Record<string, string | undefined>,
  opts: { runs: number; documents: number },
): Promise<Row> {
  const ours: number[] = []
  const oursCpu: number[] = []
  const floor: number[] = []
  const floorCpu: number[] = []
  for (let i = 0; i < opts.runs; i++) {
    const f = await timeToHealth(['bun', '-e', FLOOR_SCRIPT], {})
    floor.push(f.ms)
    floorCpu.push(f.cpuMs)
    const o = await timeToHealth(['bun', join(APP_DIR, 'src/main.ts')], env)
    ours.push(o.ms)
    oursCpu.push(o.cpuMs)
  }
  const variants = { ours: summarize(ours), floor: summarize(floor) }
  const cpu = { ours: summarize(oursCpu), floor: summarize(floorCpu) }
  return {
    measure: 'start: spawn to first /health 200, existing PGlite folder',
    size: `${opts.documents} docs`,
    variants,
    ratios: {
      'ours / floor': variants.ours.median / variants.floor.median,
      'CPU ours / floor': cpu.ours.median / Math.max(cpu.floor.median, 1),
    },
    extra: {
      'ours ms (median)': Math.round(variants.ours.median),
      'floor ms (median)': Math.round(variants.floor.median),
      'ours CPU ms (median, all threads)': Math.round(cpu.ours.median),
      'floor CPU ms (median)': Math.round(cpu.floor.median),
    },
    target: { text: 'first /health within 1 s (issue 30)', met: variants.ours.median <= 1_000 },
  }
}
