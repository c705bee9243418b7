/**
 * The capacity bench's processes and counters (bench/lib/capacity.ts): the load processes
 * (bench/lib/capacity-load.ts) and their one-line JSON protocol, a redis-server of the run's own, a
 * process's RSS, a /metrics gauge, and the database's PostgreSQL backends' CPU and write counters.
 */
import { readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import type { SQL } from 'bun'
import { eachLine } from './lines.ts'
import { cpuMs } from './peer-contenders.ts'

export type Answer = Record<string, unknown> & { error?: string }

/** A load process and its one-line JSON protocol. */
export function spawnLoad(url: string, token: string) {
  const proc = Bun.spawn(['bun', join(import.meta.dir, 'capacity-load.ts'), url, token], {
    stdin: 'pipe',
    stdout: 'pipe',
    stderr: 'inherit',
    env: { ...process.env, NODE_TLS_REJECT_UNAUTHORIZED: undefined },
  })
  const waiting = new Map<number, (a: Answer) => void>()
  let nextId = 1
  void eachLine(proc.stdout, (line) => {
    const answer = JSON.parse(line) as Answer & { id: number }
    waiting.get(answer.id)?.(answer)
    waiting.delete(answer.id)
  })
  return {
    pid: proc.pid,
    send(command: Record<string, unknown>): Promise<Answer> {
      const id = nextId++
      const answered = new Promise<Answer>((resolve) => waiting.set(id, resolve))
      proc.stdin.write(`${JSON.stringify({ id, ...command })}\n`)
      void proc.stdin.flush()
      return answered.then((a) => {
        if (a.error) throw new Error(`load process: ${a.error}`)
        return a
      })
    },
    async stop() {
      proc.stdin.end()
      await Promise.race([proc.exited, Bun.sleep(5_000).then(() => proc.kill('SIGKILL'))])
    },
  }
}
export type Load = ReturnType<typeof spawnLoad>

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}

/** A redis-server of this run's own (Debian's package), without persistence. */
export async function startRedis() {
  const port = await freePort()
  const proc = Bun.spawn(
    ['redis-server', '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdout: 'ignore', stderr: 'inherit' },
  )
  const cli = (...args: string[]) =>
    Bun.spawnSync(['redis-cli', '-p', String(port), ...args]).stdout.toString()
  for (let i = 0; i < 100 && !cli('PING').includes('PONG'); i++) await Bun.sleep(50)
  return {
    url: `redis://127.0.0.1:${port}`,
    pid: proc.pid,
    publishes: () => Number(/cmdstat_publish:calls=(\d+)/.exec(cli('INFO', 'commandstats'))?.[1] ?? 0),
    async stop() {
      proc.kill('SIGTERM')
      await proc.exited
    },
  }
}

export const rssMB = (pid: number) =>
  Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024

export async function gauge(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text()
  return Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN)
}

/** The database's own PostgreSQL backends (CPU from /proc) and its write counters. */
export function postgresCounters(sql: SQL) {
  return {
    async cpuMs(): Promise<number> {
      const rows = (await sql`SELECT pid FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid()`) as Array<{ pid: number }>
      let total = 0
      for (const { pid } of rows) {
        try {
          total += cpuMs(pid)
        } catch {} // a backend that ended meanwhile
      }
      return total
    },
    async writes(): Promise<{ xacts: number; rows: number }> {
      const [row] = (await sql`SELECT xact_commit::float8 AS x,
        (tup_inserted + tup_updated + tup_deleted)::float8 AS r
        FROM pg_stat_database WHERE datname = current_database()`) as Array<{ x: number; r: number }>
      return { xacts: row?.x ?? 0, rows: row?.r ?? 0 }
    },
  }
}
