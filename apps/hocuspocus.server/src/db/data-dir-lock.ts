/**
 * An embedded PGlite folder must be opened by one process at a time, or it is corrupted.
 * Whoever opens it (server or CLI) holds `DATA_DIR/pglite.lock`, which names its pid and role;
 * a lock whose process is gone is stale and taken over.
 */
import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs'
import { join } from 'node:path'

export type LockRole = 'server' | 'cli'
export type DataDirLock = { release(): void }
export type LockHolder = { pid: number; role: LockRole }

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

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** The live holder of the lock, if any. */
export function readLockHolder(dataDir: string): LockHolder | null {
  try {
    const holder = JSON.parse(readFileSync(lockPath(dataDir), 'utf8')) as LockHolder
    return typeof holder.pid === 'number' && alive(holder.pid) ? holder : null
  } catch {
    return null
  }
}

export function acquireDataDirLock(dataDir: string, role: LockRole): DataDirLock {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 })
  const path = lockPath(dataDir)
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o600)
      writeSync(fd, JSON.stringify({ pid: process.pid, role }))
      closeSync(fd)
      let released = false
      return {
        release() {
          if (released) return
          released = true
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
        unlinkSync(path) // stale: its process is gone
      } catch {}
    }
  }
  throw new Error(`DATA_DIR: could not take ${path}; remove it if no server or CLI is running`)
}
