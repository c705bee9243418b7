/**
 * CLI commands for the database: its migrations (apply the pending ones, show their status), moving the
 * embedded database to PostgreSQL (db-copy.ts), backups and restores of either (db-backup.ts).
 */
import { type Command, EXIT_FAILURE, EXIT_OK } from './command.ts'
import { dbBackupCommands } from './db-backup.ts'
import { dbCopyCommands } from './db-copy.ts'

export const dbCommands: Record<string, Command> = {
  'db migrate': {
    usage: 'db migrate',
    summary: 'Apply pending migrations from prisma/migrations.',
    options: {},
    positionals: [],
    async run({ services, io }) {
      const { applyMigrations } = await import('../../db/migrations.ts')
      const applied = await applyMigrations(services.db.adapterFactory, {
        onWarning: (m) => io.err(`${m}\n`),
      })
      io.out(applied.length ? `applied: ${applied.join(', ')}\n` : 'database is up to date\n')
      return EXIT_OK
    },
  },
  'db status': {
    usage: 'db status',
    summary: 'Show which migrations are applied, pending or failed.',
    options: {},
    positionals: [],
    async run({ services, io }) {
      const { migrationStatus } = await import('../../db/migrations.ts')
      const s = await migrationStatus(services.db.adapterFactory)
      io.out(`database: ${services.db.kind}\nmigrations: ${s.total}\n`)
      io.out(`pending: ${s.pending.length ? s.pending.join(', ') : 'none'}\n`)
      if (s.failed.length) io.out(`failed: ${s.failed.join(', ')}\n`)
      if (s.edited.length) io.out(`edited after being applied: ${s.edited.join(', ')}\n`)
      if (s.unknown.length) io.out(`applied but not in prisma/migrations: ${s.unknown.join(', ')}\n`)
      return s.pending.length || s.failed.length ? EXIT_FAILURE : EXIT_OK
    },
  },
  ...dbCopyCommands,
  ...dbBackupCommands,
}
