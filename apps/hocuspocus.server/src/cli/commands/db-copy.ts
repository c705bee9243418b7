/**
 * `db copy --to postgresql://…`: the embedded database (DATA_DIR) into an empty PostgreSQL database, with
 * progress on stderr and a summary on stdout (db/copy/copy.ts does the work; docs/operations.md says how
 * to move). Refused while a server holds the folder: what it writes after the copy would be lost.
 */
import type { CopyProgress } from '../../db/copy/copy-tables.ts'
import { type Command, type CommandIO, EXIT_OK, UsageError } from './command.ts'
import { alone, cliOnly, embeddedFolder, lockFolder } from './db-alone.ts'

/** How often a table being copied reports how far it is (a table copied faster reports once, when done). */
const PROGRESS_EVERY_MS = 2_000

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`

function progressLines(io: CommandIO): CopyProgress {
  let last = Date.now()
  return ({ table, copied, total, bytes, done }) => {
    const now = Date.now()
    if (!done && (now - last < PROGRESS_EVERY_MS || copied === total)) return
    last = now
    io.err(`copy: ${table} ${copied}/${total} rows, ${mib(bytes)}${done ? ' done' : ''}\n`)
  }
}

function targetUrl(value: string | boolean | undefined): string {
  if (typeof value !== 'string' || value === '') {
    throw new UsageError(
      '--to: missing; name the empty PostgreSQL database to copy into, e.g. --to postgresql://USER:PASSWORD@HOST:5432/DB',
    )
  }
  if (!/^postgres(ql)?:\/\//.test(value)) {
    throw new UsageError('--to: expected a postgresql:// URL, e.g. postgresql://USER:PASSWORD@HOST:5432/DB')
  }
  return value
}

export const dbCopyCommands: Record<string, Command> = {
  'db copy': {
    usage: 'db copy --to postgresql://USER:PASSWORD@HOST:5432/DB',
    summary:
      'Copy everything in the embedded database (DATA_DIR) into an empty PostgreSQL database, verified (the server must be stopped).',
    options: { to: { type: 'string' } },
    positionals: [],
    run: cliOnly('db copy'),
    runAlone: alone('db copy', async ({ opts, config, io }) => {
      if (config.databaseUrl) {
        throw new UsageError(
          'DATABASE_URL: set, so this CLI works on PostgreSQL; db copy reads the embedded database in DATA_DIR: unset DATABASE_URL and name the target with --to',
        )
      }
      const url = targetUrl(opts.to)
      embeddedFolder(config)
      const lock = lockFolder(
        config,
        io,
        'stop it first, then copy: a copy taken while it runs would miss what it writes afterwards',
      )
      const started = Date.now()
      try {
        // The copy's machinery (the database client, both drivers, the migrations), imported when it runs.
        const [
          { databaseTarget, openDatabase },
          { checkTarget, copyDatabase },
          { applyMigrations, migrationsUpToDate },
        ] = await Promise.all([
          import('../../db/client.ts'),
          import('../../db/copy/copy.ts'),
          import('../../db/migrations.ts'),
        ])
        await checkTarget(url) // before opening the folder, which takes seconds
        const db = await openDatabase(databaseTarget({ ...config, databaseUrl: undefined }))
        try {
          if (!(await migrationsUpToDate(db.adapterFactory))) {
            if (!config.migrateOnStart) {
              throw new UsageError(
                'DATA_DIR: the embedded database has pending migrations and MIGRATE_ON_START is false; run `bun run cli -- db migrate` first',
              )
            }
            const applied = await applyMigrations(db.adapterFactory, { onWarning: (m) => io.err(`${m}\n`) })
            if (applied.length) io.err(`copy: migrated the embedded database first: ${applied.join(', ')}\n`)
          }
          const report = await copyDatabase({
            source: db.adapterFactory,
            targetUrl: url,
            progress: progressLines(io),
            note: (message) => io.err(`copy: ${message}\n`),
          })
          const rows = report.tables.reduce((sum, t) => sum + t.rows, 0)
          const seconds = ((Date.now() - started) / 1000).toFixed(1)
          io.out(
            `copied ${rows} rows of ${report.tables.length} tables (${mib(report.bytes)}) and ${report.sequences} sequences in ${seconds} s; verified: every table's rows and values match\n`,
          )
          for (const table of report.tables) io.out(`  ${table.name.padEnd(28)} ${table.rows}\n`)
          io.out(
            `Next: start the server with DATABASE_URL set to the target. ${config.dataDir} is unchanged; keep it until you are satisfied.\n`,
          )
          return EXIT_OK
        } finally {
          await db.close()
        }
      } finally {
        lock.release()
      }
    }),
  },
}
