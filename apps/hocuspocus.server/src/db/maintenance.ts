/**
 * Vacuum and analyze for the embedded database. PGlite runs PostgreSQL in one process without the
 * autovacuum launcher, so nothing reclaims the dead row versions every store leaves behind, and nothing
 * refreshes the planner's statistics. Measured: 300 stores of a 200 KB state grew the table by 60 MB, and
 * again by 60 MB for each further 300, without end; a VACUUM stopped the growth (the space is reused).
 * Stale statistics also sent full-text queries to a sequential scan (bench/lib/find.ts).
 *
 * This loop applies autovacuum's own rule (PostgreSQL's defaults) from pg_stat_all_tables: vacuum a table
 * once its dead rows exceed 50 + 20% of its live rows, analyze it once its changes since the last analyze
 * exceed 50 + 10%. PostgreSQL servers run their own autovacuum; this is started only for PGlite.
 *
 * A table's TOAST table is judged on its own rows, as autovacuum does: a store updates its one
 * document_states row in place (a HOT update, whose dead versions page pruning removes and no longer
 * counts), while every old state stays behind as dead TOAST rows. Judging the main table alone missed
 * exactly the growth this loop exists for.
 */
import type { Logger } from '../logger.ts'
import type { Database } from './client.ts'

/** How often the embedded database's table statistics are checked. */
export const EMBEDDED_MAINTENANCE_INTERVAL_MS = 60_000
/** autovacuum_vacuum_threshold / _scale_factor and autovacuum_analyze_threshold / _scale_factor. */
const VACUUM_THRESHOLD = 50
const VACUUM_SCALE = 0.2
const ANALYZE_THRESHOLD = 50
const ANALYZE_SCALE = 0.1

type TableStats = { table: string; toast: boolean; live: number; dead: number; modified: number }

export type MaintenanceRun = { vacuumed: string[]; analyzed: string[] }

/** One pass: vacuums and analyzes the tables past their thresholds. */
export async function maintainOnce(db: Pick<Database, 'prisma'>): Promise<MaintenanceRun> {
  // A backend reports its table statistics at most once a second: have this statement report what is
  // pending, so a pass right after a burst of stores sees the rows that burst left dead.
  await db.prisma.$queryRaw`SELECT pg_stat_force_next_flush()::text AS flushed`
  // Each public table, and each TOAST table under the name of the table it belongs to.
  const stats = await db.prisma.$queryRaw<TableStats[]>`
    SELECT COALESCE(owner.relname, s.relname) AS "table", owner.relname IS NOT NULL AS toast,
           s.n_live_tup::float8 AS live, s.n_dead_tup::float8 AS dead,
           s.n_mod_since_analyze::float8 AS modified
      FROM pg_stat_all_tables s
      LEFT JOIN pg_class owner ON owner.reltoastrelid = s.relid
     WHERE s.schemaname = 'public'
        OR (s.schemaname = 'pg_toast' AND owner.relnamespace = 'public'::regnamespace)`
  const vacuum = new Set<string>()
  const analyze = new Set<string>()
  for (const { table, toast, live, dead, modified } of stats) {
    if (!/^[a-z_][a-z0-9_]*$/.test(table)) continue // names come from the catalog; quoted below anyway
    if (dead > VACUUM_THRESHOLD + VACUUM_SCALE * live) vacuum.add(table)
    // Statistics are kept for a table's own columns; its TOAST table is never analyzed on its own.
    if (!toast && modified > ANALYZE_THRESHOLD + ANALYZE_SCALE * live) analyze.add(table)
  }
  const run: MaintenanceRun = { vacuumed: [], analyzed: [] }
  for (const table of new Set([...vacuum, ...analyze])) {
    // VACUUM of a table also vacuums its TOAST table.
    await db.prisma.$executeRawUnsafe(`${vacuum.has(table) ? 'VACUUM (ANALYZE)' : 'ANALYZE'} "${table}"`)
    if (vacuum.has(table)) run.vacuumed.push(table)
    run.analyzed.push(table)
  }
  return run
}

/** Runs `maintainOnce` every interval until stopped; a failed pass is logged and tried again next time. */
export function startEmbeddedMaintenance(deps: {
  db: Pick<Database, 'prisma'>
  logger: Logger
  intervalMs?: number
}): { stop(): Promise<void> } {
  let running: Promise<unknown> | undefined
  const timer = setInterval(() => {
    if (running) return
    running = maintainOnce(deps.db)
      .then((run) => {
        if (run.vacuumed.length || run.analyzed.length) deps.logger.debug(run, 'embedded database maintained')
      })
      .catch((err: Error) => deps.logger.warn({ err: err.message }, 'embedded database maintenance failed'))
      .finally(() => {
        running = undefined
      })
  }, deps.intervalMs ?? EMBEDDED_MAINTENANCE_INTERVAL_MS)
  timer.unref?.()
  return {
    async stop() {
      clearInterval(timer)
      await running
    },
  }
}
