/**
 * The server's database, opened: the data folder's lock (embedded database), the database itself and, with
 * MIGRATE_ON_START, its migrations. Its own file, light to import, so that boot.ts can start it before it
 * imports server.ts and everything under it: PGlite then opens on its thread (~2 s of a start, measured)
 * while those modules load on the main one (~1 s), instead of after them.
 */
import type { Config } from './config.ts'
import { type Database, databaseTarget, openDatabase } from './db/client.ts'
import { acquireDataDirLock, type DataDirLock } from './db/data-dir-lock.ts'
import { applyMigrations } from './db/migrations.ts'
import { saveTemplate } from './db/pglite-template.ts'
import type { Logger } from './logger.ts'

export type ServerDatabase = { database: Database; lock: DataDirLock | undefined }

export async function openServerDatabase(config: Config, logger: Logger): Promise<ServerDatabase> {
  const target = databaseTarget(config)
  let lock: DataDirLock | undefined
  if (target.kind === 'pglite') {
    // An embedded database folder must never be opened by two processes at once.
    lock = acquireDataDirLock(config.dataDir, 'server', {
      onTakeover: (message, found) => logger.warn({ lock: found }, message),
    })
  }
  let db: Database | undefined
  try {
    db = await openDatabase(target, { onThreadProblem: (message) => logger.warn(message) })
    if (config.migrateOnStart) {
      const applied = await applyMigrations(db.adapterFactory, { onWarning: (m) => logger.warn(m) })
      if (applied.length) logger.info({ applied }, 'migrations applied')
      if (target.kind === 'pglite' && db.made === 'template')
        logger.info('new database folder made from a template')
      // The first start on a new folder keeps a template of it, migrated and still empty of anyone's data
      // (first-run.ts runs after this), so the next new folder skips initdb and the migrations.
      if (target.kind === 'pglite' && db.made === 'initdb' && target.templates && db.dumpDataDir) {
        const dump = db.dumpDataDir
        await saveTemplate(target.templates, (file) => dump(file)).then(
          (file) => logger.info({ template: file }, 'saved a template for new database folders'),
          (error) => logger.warn({ err: error }, 'could not save a template for new database folders'),
        )
      }
    }
  } catch (error) {
    await db?.close().catch(() => {})
    lock?.release()
    throw error
  }
  return { database: db, lock }
}
