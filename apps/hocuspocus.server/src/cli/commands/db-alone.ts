/**
 * What the commands that open the database themselves (db copy, db backup, db restore: `runAlone`) share:
 * their refusals as exit codes, the embedded folder's lock, and the answer `run` gives when such a
 * command reaches a server's admin socket by another way than the CLI.
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import type { Config } from '../../config.ts'
import { BackupRefused } from '../../db/backup/files.ts'
import { CopyRefused } from '../../db/copy/refused.ts'
import { acquireDataDirLock, DataDirBusyError, type DataDirLock } from '../../db/data-dir-lock.ts'
import { type Command, type CommandIO, EXIT_FAILURE, EXIT_USAGE, UsageError } from './command.ts'

type AloneContext = Parameters<NonNullable<Command['runAlone']>>[0]

/** A runAlone body with its refusals mapped: bad input exit 2, a refusal or failure exit 1, one line each. */
export function alone(name: string, body: (ctx: AloneContext) => Promise<number>): Command['runAlone'] {
  return async (ctx) => {
    try {
      return await body(ctx)
    } catch (error) {
      if (error instanceof UsageError) {
        ctx.io.err(`${error.message}\n`)
        return EXIT_USAGE
      }
      const refused = error instanceof CopyRefused || error instanceof BackupRefused
      ctx.io.err(`${refused ? '' : `${name}: failed: `}${(error as Error).message}\n`)
      return EXIT_FAILURE
    }
  }
}

/** `run` of a command that only the CLI runs (it never reaches a server through the CLI). */
export function cliOnly(name: string): Command['run'] {
  return async ({ io }) => {
    io.err(`${name}: runs in the CLI only (bun run cli -- ${name}), never inside a running server\n`)
    return EXIT_USAGE
  }
}

/** The embedded database's folder (DATA_DIR/pglite), refused when it holds no database yet. */
export function embeddedFolder(config: Config): string {
  const dir = join(config.dataDir, 'pglite')
  if (!existsSync(join(dir, 'PG_VERSION'))) {
    throw new UsageError(
      `DATA_DIR: ${config.dataDir} holds no embedded database (no pglite/PG_VERSION); point DATA_DIR at the folder the server ran on`,
    )
  }
  return dir
}

/** The folder's lock for this command, or a refusal naming who holds it and what to do. */
export function lockFolder(config: Config, io: CommandIO, whenServerHolds: string): DataDirLock {
  try {
    return acquireDataDirLock(config.dataDir, 'cli', { onTakeover: (message) => io.err(`${message}\n`) })
  } catch (error) {
    if (error instanceof DataDirBusyError && error.holder.role === 'server') {
      throw new CopyRefused(
        `DATA_DIR: ${config.dataDir} is held by a running server (pid ${error.holder.pid}); ${whenServerHolds}`,
      )
    }
    if (error instanceof DataDirBusyError) throw new CopyRefused(error.message)
    throw error
  }
}
