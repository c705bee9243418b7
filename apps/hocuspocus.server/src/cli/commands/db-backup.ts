/**
 * `db backup BACKUP_FILE` and `db restore BACKUP_FILE [--force]`, for both databases (docs/operations.md):
 *
 * - PostgreSQL (DATABASE_URL): pg_dump's custom format and pg_restore, run by the CLI (db/backup/postgres.ts).
 * - Embedded (DATA_DIR): PGlite's dumpDataDir, taken by the process that holds the folder: a running
 *   server, reached through its admin socket (the command's `run` below runs there), or else the CLI,
 *   which takes the folder's lock first. A restore never runs while a server holds the folder.
 */
import { isAbsolute, join, resolve } from 'node:path'
import { toolEnvironment } from '../../config.ts'
import { BackupRefused, backupKindOf, refuseExisting } from '../../db/backup/files.ts'
import { readLockHolder } from '../../db/data-dir-lock.ts'
import { sendToServer } from '../admin-client.ts'
import { type Command, type CommandIO, EXIT_FAILURE, EXIT_OK, EXIT_USAGE, UsageError } from './command.ts'
import { alone, cliOnly, embeddedFolder, lockFolder } from './db-alone.ts'

const sized = (bytes: number) =>
  bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(1)} MiB` : `${(bytes / 1024).toFixed(1)} KiB`

function wrote(io: CommandIO, file: string, bytes: number, started: number, how: string) {
  const seconds = ((Date.now() - started) / 1000).toFixed(1)
  io.out(`backup: wrote ${file} (${sized(bytes)}) in ${seconds} s, ${how}\n`)
}

const EMBEDDED = 'embedded database (PGlite dumpDataDir)'

/**
 * What a backup or a restore runs on (PGlite, the pg driver, the database client), imported when one runs:
 * the command list is read by every CLI start.
 */
const backupTools = async () => {
  const [pglite, postgres, client] = await Promise.all([
    import('../../db/backup/pglite.ts'),
    import('../../db/backup/postgres.ts'),
    import('../../db/client.ts'),
  ])
  return { ...pglite, ...postgres, ...client }
}

export const dbBackupCommands: Record<string, Command> = {
  'db backup': {
    usage: 'db backup BACKUP_FILE',
    summary:
      "Write a consistent backup of the database (also while the server runs): pg_dump, or PGlite's data-folder dump.",
    options: {},
    positionals: ['BACKUP_FILE'],
    // Inside the server that holds the embedded folder (the CLI sends an absolute path through the admin socket).
    async run({ args, services, io }) {
      const file = args[0]!
      if (!isAbsolute(file) || !services.db.dumpDataDir) {
        io.err(
          `BACKUP_FILE: ${file}: a server takes only an absolute path, for its embedded database (use bun run cli -- db backup)\n`,
        )
        return EXIT_USAGE
      }
      const started = Date.now()
      try {
        wrote(
          io,
          file,
          await services.db.dumpDataDir(file),
          started,
          `${EMBEDDED}, taken by the running server`,
        )
        return EXIT_OK
      } catch (error) {
        io.err(`${error instanceof BackupRefused ? '' : 'db backup: failed: '}${(error as Error).message}\n`)
        return EXIT_FAILURE
      }
    },
    runAlone: alone('db backup', async ({ args, config, io }) => {
      const file = resolve(args[0]!)
      refuseExisting(file)
      const started = Date.now()
      if (config.databaseUrl) {
        wrote(
          io,
          file,
          await (await backupTools()).pgDump(config.databaseUrl, file, toolEnvironment),
          started,
          'pg_dump custom format (restore: db restore, or pg_restore)',
        )
        return EXIT_OK
      }
      embeddedFolder(config)
      if (readLockHolder(config.dataDir)?.role === 'server') {
        const answer = await sendToServer(config.dataDir, { argv: ['db', 'backup', file] })
        io.out(answer.stdout)
        io.err(answer.stderr)
        return answer.exitCode
      }
      const lock = lockFolder(config, io, 'it takes the backup itself: run db backup again')
      try {
        const { openDatabase, databaseTarget } = await backupTools()
        const db = await openDatabase(databaseTarget({ ...config, databaseUrl: undefined }))
        try {
          wrote(io, file, await db.dumpDataDir!(file), started, EMBEDDED)
        } finally {
          await db.close()
        }
        return EXIT_OK
      } finally {
        lock.release()
      }
    }),
  },
  'db restore': {
    usage: 'db restore BACKUP_FILE [--force]',
    summary:
      'Restore a db backup file into an empty database (DATABASE_URL) or a new data folder (DATA_DIR); --force replaces what is there.',
    options: { force: { type: 'boolean' } },
    positionals: ['BACKUP_FILE'],
    run: cliOnly('db restore'),
    runAlone: alone('db restore', async ({ args, opts, config, io }) => {
      const file = resolve(args[0]!)
      const kind = backupKindOf(file)
      const force = opts.force === true
      const started = Date.now()
      const seconds = () => ((Date.now() - started) / 1000).toFixed(1)
      if (config.databaseUrl) {
        if (kind !== 'postgres') {
          throw new UsageError(
            `BACKUP_FILE: ${file} is an embedded database backup; restore it into a data folder (DATA_DIR, without DATABASE_URL), then move it with db copy --to`,
          )
        }
        await (await backupTools()).pgRestore(config.databaseUrl, file, force, toolEnvironment)
        io.out(`restore: ${file} restored into PostgreSQL in ${seconds()} s\n`)
        return EXIT_OK
      }
      if (kind !== 'pglite') {
        throw new UsageError(
          `BACKUP_FILE: ${file} is a pg_dump archive; set DATABASE_URL to the (empty) PostgreSQL database to restore it into`,
        )
      }
      const lock = lockFolder(config, io, 'stop it first: a folder cannot be replaced under a running server')
      try {
        const restored = await (await backupTools()).restorePgliteFolder(
          file,
          join(config.dataDir, 'pglite'),
          force,
        )
        const rows = restored.tables.reduce((sum, t) => sum + t.rows, 0)
        io.out(
          `restore: ${file} restored into ${config.dataDir} in ${seconds()} s: ${restored.tables.length} tables, ${rows} rows\n`,
        )
        if (restored.setAside) io.out(`restore: the folder that was there is kept as ${restored.setAside}\n`)
        return EXIT_OK
      } finally {
        lock.release()
      }
    }),
  },
}
