/**
 * Backup files: written under a temporary name and renamed when whole (a failed or interrupted backup
 * never leaves a file that looks finished), readable by this user only (a backup holds password and token
 * hashes and the server's cookie secrets), never over an existing file. And what a file is, from its
 * first bytes: PGlite's data-folder tarball (gzip) or pg_dump's custom format.
 */
import { closeSync, existsSync, openSync, readSync, renameSync, rmSync, statSync } from 'node:fs'

export class BackupRefused extends Error {
  override name = 'BackupRefused'
}

export function refuseExisting(file: string): void {
  if (existsSync(file)) {
    throw new BackupRefused(`BACKUP: ${file} exists; name a new file (a backup never replaces one)`)
  }
}

/** A private empty file beside `file` that `finish` renames into place; `abandon` removes it. */
export function partialFile(file: string): { path: string; finish(): number; abandon(): void } {
  refuseExisting(file)
  const path = `${file}.partial-${process.pid}`
  closeSync(openSync(path, 'w', 0o600))
  return {
    path,
    finish() {
      refuseExisting(file)
      renameSync(path, file)
      return statSync(file).size
    },
    abandon: () => rmSync(path, { force: true }),
  }
}

/** Writes a blob as a backup file; returns its size in bytes. */
export async function writeBackupFile(file: string, blob: Blob): Promise<number> {
  const partial = partialFile(file)
  try {
    await Bun.write(partial.path, blob)
    return partial.finish()
  } catch (error) {
    partial.abandon()
    throw error
  }
}

export type BackupKind = 'pglite' | 'postgres'

/** What a backup file holds, from its first bytes; throws a BackupRefused naming what it is not. */
export function backupKindOf(file: string): BackupKind {
  let head: Buffer
  try {
    const fd = openSync(file, 'r')
    head = Buffer.alloc(5)
    readSync(fd, head, 0, 5, 0)
    closeSync(fd)
  } catch (error) {
    throw new BackupRefused(`BACKUP: cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? error}`)
  }
  if (head[0] === 0x1f && head[1] === 0x8b) return 'pglite'
  if (head.toString('latin1') === 'PGDMP') return 'postgres'
  throw new BackupRefused(
    `BACKUP: ${file} is neither an embedded database backup (gzip) nor a pg_dump archive (custom format); name a file db backup wrote`,
  )
}
