/**
 * An embedded PGlite folder must be opened by one process at a time, or it is corrupted.
 * Whoever opens it (server or CLI) holds `DATA_DIR/pglite.lock`, which names its pid, role, and (on Linux)
 * the process's start time and the machine's boot id; a lock whose process is gone is stale and taken over.
 *
 * A pid alone does not identify a process: after kill -9 in a container without init the server is pid 1
 * again on its next start, and a pid can be reused by an unrelated process. So a lock naming our own pid
 * is ours only if this process holds it (tracked in `heldHere`), and a lock whose recorded start time or
 * boot id differs from the live process's is stale.
 */
import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs'
import { join } from 'node:path'

export type LockRole = 'server' | 'cli'
export type DataDirLock = { release(): void }
export type LockHolder = { pid: number; role: LockRole }
/** What the lock file holds. `startTime` and `bootId` are absent where /proc is not available. */
type LockRecord = LockHolder & { startTime?: string; bootId?: string }

export class DataDirBusyError extends Error {
  override name = 'DataDirBusyError'
  constructor(
    readonly holder: LockHolder,
    dataDir: string,
  ) {
    super(
      holder.role === 'server'
        ? `DATA_DIR: ${dataDir} is in use by a running server (pid ${holder.pid}); stop it first or use another DATA_DIR`
        : `DATA_DIR: ${dataDir} is in use by another CLI command (pid ${holder.pid}); wait for it and try again`,
    )
  }
}

export const lockPath = (dataDir: string) => join(dataDir, 'pglite.lock')

/** Lock files this process holds now: a lock naming our own pid and not in here is a dead run's. */
const heldHere = new Set<string>()

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** Field 22 of /proc/<pid>/stat (start time in clock ticks since boot), or undefined off Linux. */
export function processStartTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // Field 2 (the command name) may hold spaces and parentheses: count from the last ')', which ends it.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    const startTime = fields[22 - 3] // fields[0] is field 3
    return startTime && /^\d+$/.test(startTime) ? startTime : undefined
  } catch {
    return undefined
  }
}

function bootId(): string | undefined {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || undefined
  } catch {
    return undefined
  }
}

function readRecord(path: string): LockRecord | null {
  try {
    const record = JSON.parse(readFileSync(path, 'utf8')) as LockRecord
    if (!Number.isSafeInteger(record?.pid) || record.pid <= 0) return null
    return record
  } catch {
    return null
  }
}

/** Whether the process the record names is still the one that wrote it. */
function holderIsLive(record: LockRecord, path: string): boolean {
  if (record.pid === process.pid) return heldHere.has(path)
  if (!alive(record.pid)) return false
  if (record.bootId !== undefined) {
    const now = bootId()
    if (now !== undefined && now !== record.bootId) return false // written before a reboot
  }
  if (record.startTime !== undefined) {
    const now = processStartTime(record.pid)
    if (now !== undefined && now !== record.startTime) return false // the pid was reused
  }
  return true
}

/** The live holder of the lock, if any. */
export function readLockHolder(dataDir: string): LockHolder | null {
  const path = lockPath(dataDir)
  const record = readRecord(path)
  return record && holderIsLive(record, path) ? { pid: record.pid, role: record.role } : null
}

export function acquireDataDirLock(dataDir: string, role: LockRole): DataDirLock {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 })
  const path = lockPath(dataDir)
  const record: LockRecord = {
    pid: process.pid,
    role,
    startTime: processStartTime(process.pid),
    bootId: bootId(),
  }
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o600)
      writeSync(fd, JSON.stringify(record))
      closeSync(fd)
      heldHere.add(path)
      let released = false
      return {
        release() {
          if (released) return
          released = true
          heldHere.delete(path)
          try {
            unlinkSync(path)
          } catch {}
        },
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      const holder = readLockHolder(dataDir)
      if (holder) throw new DataDirBusyError(holder, dataDir)
      try {
        unlinkSync(path) // stale: its process is gone, or it is a dead run of ours, or the pid was reused
      } catch {}
    }
  }
  throw new Error(`DATA_DIR: could not take ${path}; remove it if no server or CLI is running`)
}
