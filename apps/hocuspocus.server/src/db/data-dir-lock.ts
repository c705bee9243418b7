/**
 * An embedded PGlite folder must be opened by one process at a time, or it is corrupted.
 * Whoever opens it (server or CLI) holds `DATA_DIR/pglite.lock`, which names its pid, role, and (on Linux)
 * the process's start time and the machine's boot id; a lock whose process is gone is stale and taken over.
 *
 * A pid alone does not identify a process: after kill -9 in a container without init the server is pid 1
 * again on its next start, and a pid can be reused by an unrelated process. So a lock naming our own pid
 * is ours only if this process holds it (tracked in `heldHere`), and a lock whose recorded start time or
 * boot id differs from the live process's is stale.
 *
 * A lock in the old format (pid and role only) names a process it cannot identify: PID 1 in a container is
 * usually its init, alive for ever. Where /proc gives start times (so the current format would have
 * recorded one), such a lock is the holder's only if that process has a file open inside this folder (a
 * server holds PGlite's files open); otherwise it is stale, taken over, and the taker is told what was
 * found and why (`onTakeover`, a warning in the log).
 */
import {
  closeSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  unlinkSync,
  writeSync,
} from 'node:fs'
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

/** Whether process `pid` has a file open inside `dir`; undefined when its open files cannot be read. */
function holdsFileUnder(pid: number, dir: string): boolean | undefined {
  let root: string
  let fds: string[]
  try {
    root = `${realpathSync(dir)}/`
    fds = readdirSync(`/proc/${pid}/fd`)
  } catch {
    return undefined
  }
  return fds.some((fd) => {
    try {
      return readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith(root)
    } catch {
      return false
    }
  })
}

/**
 * Why the record's holder is not a live holder of this folder (the lock is stale), or null when it is.
 * The reason is what the takeover warning says.
 */
function staleReason(record: LockRecord, path: string, dataDir: string): string | null {
  const { pid } = record
  if (pid === process.pid)
    return heldHere.has(path)
      ? null
      : `it names this process's own pid ${pid}, which did not take it: a run that ended without removing it (pid 1 again after a restart in a container)`
  if (!alive(pid)) return `its process (pid ${pid}) is gone`
  if (record.bootId !== undefined) {
    const now = bootId()
    if (now !== undefined && now !== record.bootId)
      return `it was written before the machine restarted (boot id ${record.bootId}, now ${now})`
  }
  const startTime = processStartTime(pid)
  if (record.startTime !== undefined) {
    if (startTime !== undefined && startTime !== record.startTime)
      return `pid ${pid} is another process now (started at tick ${startTime}, the lock's at ${record.startTime}): the pid was reused`
    return null
  }
  // The old format: nothing in it identifies the process. Where start times are readable, it is the
  // holder's only if that process is using this folder.
  if (startTime === undefined) return null
  const holds = holdsFileUnder(pid, dataDir)
  if (holds) return null
  return `it is in the old format (pid ${pid} and role ${record.role}, no start time or boot id to identify its process) and pid ${pid} ${holds === false ? 'has no file open in this folder' : 'cannot be inspected'}, so nothing shows it is using this folder${pid === 1 ? ' (pid 1 in a container is usually its init)' : ''}`
}

/** The live holder of the lock, if any. */
export function readLockHolder(dataDir: string): LockHolder | null {
  const path = lockPath(dataDir)
  const record = readRecord(path)
  return record && staleReason(record, path, dataDir) === null ? { pid: record.pid, role: record.role } : null
}

export type LockOptions = {
  /** Told when a stale lock is taken over: what it held and why it was stale (a warning for the log). */
  onTakeover?: (message: string, found: { pid: number; role: string; format: 'old' | 'current' }) => void
}

export function acquireDataDirLock(dataDir: string, role: LockRole, options: LockOptions = {}): DataDirLock {
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
      const found = readRecord(path)
      const reason = found ? staleReason(found, path, dataDir) : 'it cannot be read as a lock record'
      if (found && reason === null) throw new DataDirBusyError({ pid: found.pid, role: found.role }, dataDir)
      try {
        unlinkSync(path) // stale: see the reason
        options.onTakeover?.(`DATA_DIR: took over the stale lock ${path}: ${reason}`, {
          pid: found?.pid ?? 0,
          role: String(found?.role ?? 'unknown'),
          format: found?.startTime === undefined ? 'old' : 'current',
        })
      } catch {}
    }
  }
  throw new Error(`DATA_DIR: could not take ${path}; remove it if no server or CLI is running`)
}
