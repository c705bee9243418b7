/**
 * The data-folder lock knows its owner by more than a pid. Attacks and accidents it must survive:
 * kill -9 of a server running as pid 1 (a container without init) leaves a lock naming pid 1, which is the
 * next start's own pid; a dead holder's pid reused by an unrelated live process. A lock really held by
 * another live process is still refused.
 */
import { afterAll, afterEach, describe, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createTestDatabase } from '@collab/test-support/database'
import { spawnServer } from '@collab/test-support/process'
import { startTestServer } from '@collab/test-support/server'
import type { Subprocess } from 'bun'
import {
  acquireDataDirLock,
  DataDirBusyError,
  lockPath,
  processStartTime,
  readLockHolder,
} from '../db/data-dir-lock.ts'

const LOCK_MODULE = join(import.meta.dir, '../db/data-dir-lock.ts')

const dirs: string[] = []
const children: Subprocess[] = []
function freshDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'collab-lock-'))
  dirs.push(dir)
  return dir
}
afterEach(async () => {
  for (const child of children.splice(0)) {
    child.kill('SIGKILL')
    await child.exited
  }
})
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

/** A real other process that takes the lock and keeps it until killed. */
async function childHolding(dataDir: string): Promise<Subprocess<'ignore', 'pipe', 'inherit'>> {
  const script = `
    const { acquireDataDirLock } = await import(${JSON.stringify(LOCK_MODULE)})
    acquireDataDirLock(${JSON.stringify(dataDir)}, 'server')
    console.log('held')
    setInterval(() => {}, 1000)
  `
  const child = Bun.spawn(['bun', '-e', script], { stdin: 'ignore', stdout: 'pipe', stderr: 'inherit' })
  children.push(child)
  const reader = child.stdout.getReader()
  let text = ''
  while (!text.includes('held')) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`the child exited before taking the lock: ${text}`)
    text += new TextDecoder().decode(value)
  }
  reader.releaseLock()
  return child
}

describe('data-folder lock', () => {
  test('a lock left by a dead run with our own pid (pid 1 after kill -9 in a container) is taken over', () => {
    const dir = freshDir()
    writeFileSync(lockPath(dir), JSON.stringify({ pid: process.pid, role: 'server' }))
    expect(readLockHolder(dir)).toBeNull()
    const lock = acquireDataDirLock(dir, 'server')
    expect(JSON.parse(readFileSync(lockPath(dir), 'utf8')).pid).toBe(process.pid)
    lock.release()
    expect(existsSync(lockPath(dir))).toBe(false)
  })

  test('a lock this process holds is still refused to a second opener in the same process', () => {
    const dir = freshDir()
    const lock = acquireDataDirLock(dir, 'server')
    try {
      expect(() => acquireDataDirLock(dir, 'cli')).toThrow(DataDirBusyError)
      expect(readLockHolder(dir)).toEqual({ pid: process.pid, role: 'server' })
    } finally {
      lock.release()
    }
  })

  test('a lock naming a live pid with another start time (the pid was reused) is taken over', async () => {
    const dir = freshDir()
    const unrelated = Bun.spawn(['sleep', '60'], { stdin: 'ignore', stdout: 'ignore', stderr: 'ignore' })
    children.push(unrelated)
    const startTime = processStartTime(unrelated.pid)
    expect(startTime).toBeDefined() // Linux: the guard below is live, not skipped
    const earlier = String(Number(startTime) - 1)
    writeFileSync(lockPath(dir), JSON.stringify({ pid: unrelated.pid, role: 'server', startTime: earlier }))
    expect(readLockHolder(dir)).toBeNull()
    acquireDataDirLock(dir, 'server').release()
  })

  test('a lock written before a reboot (another boot id) is taken over', () => {
    const dir = freshDir()
    // pid 1 is alive on any machine; the record says it belongs to another boot.
    writeFileSync(
      lockPath(dir),
      JSON.stringify({ pid: 1, role: 'server', bootId: '00000000-0000-0000-0000-000000000000' }),
    )
    expect(readLockHolder(dir)).toBeNull()
    acquireDataDirLock(dir, 'server').release()
  })

  test('a lock held by another live process is refused, and named as that process', async () => {
    const dir = freshDir()
    const child = await childHolding(dir)
    expect(() => acquireDataDirLock(dir, 'server')).toThrow(DataDirBusyError)
    expect(() => acquireDataDirLock(dir, 'server')).toThrow(`running server (pid ${child.pid})`)
    expect(readLockHolder(dir)).toEqual({ pid: child.pid, role: 'server' })
    child.kill('SIGKILL')
    await child.exited
    acquireDataDirLock(dir, 'server').release() // its process is gone: stale
  })

  test('a lock in the old format naming pid 1 (alive, but not using this folder) is taken over, with a warning saying why', () => {
    // Caught: pid 1 is alive for ever (a container's init), and the old format has nothing else to
    // identify its process by, so such a lock refused every start.
    const dir = freshDir()
    writeFileSync(lockPath(dir), JSON.stringify({ pid: 1, role: 'server' }))
    expect(readLockHolder(dir)).toBeNull()
    const warnings: string[] = []
    const lock = acquireDataDirLock(dir, 'server', { onTakeover: (message) => warnings.push(message) })
    expect(JSON.parse(readFileSync(lockPath(dir), 'utf8')).pid).toBe(process.pid)
    lock.release()
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toStartWith(
      `DATA_DIR: took over the stale lock ${lockPath(dir)}: it is in the old format`,
    )
    expect(warnings[0]).toContain('pid 1')
    expect(warnings[0]).toContain('so nothing shows it is using this folder')
  })

  test('a lock in the old format naming a live process that uses this folder is still refused', async () => {
    const dir = freshDir()
    // A real other process with a file of this folder open, as a running server has PGlite's.
    const script = `
      const { openSync } = await import('node:fs')
      openSync(${JSON.stringify(join(dir, 'in-use'))}, 'w')
      console.log('held')
      setInterval(() => {}, 1000)
    `
    const child = Bun.spawn(['bun', '-e', script], { stdin: 'ignore', stdout: 'pipe', stderr: 'inherit' })
    children.push(child)
    const reader = child.stdout.getReader()
    await reader.read()
    reader.releaseLock()
    writeFileSync(lockPath(dir), JSON.stringify({ pid: child.pid, role: 'server' }))
    expect(() => acquireDataDirLock(dir, 'server')).toThrow(`running server (pid ${child.pid})`)
  })

  test('a real server starts on a folder with an old-format pid-1 lock and logs why it took it over; a second opener is refused while it runs', async () => {
    const db = await createTestDatabase({ postgresUrl: null })
    dirs.push(db.dataDir)
    writeFileSync(lockPath(db.dataDir), JSON.stringify({ pid: 1, role: 'server' }))
    const server = await spawnServer({ DATA_DIR: db.dataDir, DATABASE_URL: '' })
    try {
      const warning = server
        .stderr()
        .split('\n')
        .filter((line) => line.includes('took over the stale lock'))
        .map((line) => JSON.parse(line) as { level: number; msg: string; lock: unknown })
      expect(warning).toHaveLength(1)
      expect(warning[0]!.level).toBe(40) // pino's warn
      expect(warning[0]!.msg).toContain('it is in the old format (pid 1 and role server')
      expect(warning[0]!.lock).toEqual({ pid: 1, role: 'server', format: 'old' })
      // The running server's lock (current format) refuses another opener, and so does the same lock
      // rewritten in the old format: that process has the folder's files open.
      expect(() => acquireDataDirLock(db.dataDir, 'server')).toThrow(
        `running server (pid ${server.proc.pid})`,
      )
      writeFileSync(lockPath(db.dataDir), JSON.stringify({ pid: server.proc.pid, role: 'server' }))
      expect(() => acquireDataDirLock(db.dataDir, 'server')).toThrow(
        `running server (pid ${server.proc.pid})`,
      )
    } finally {
      server.proc.kill('SIGTERM')
      await server.proc.exited
    }
  }, 60_000)

  test('a real server (embedded database) starts on a folder whose lock names its own pid', async () => {
    const db = await createTestDatabase({ postgresUrl: null })
    dirs.push(db.dataDir)
    writeFileSync(lockPath(db.dataDir), JSON.stringify({ pid: process.pid, role: 'server' }))
    const server = await startTestServer(db)
    try {
      expect((await fetch(`${server.url}/health`)).status).toBe(200)
    } finally {
      await server.stop()
    }
  }, 60_000)
})
