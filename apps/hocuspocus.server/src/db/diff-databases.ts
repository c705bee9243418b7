import { PGlite } from '@electric-sql/pglite'
import type { SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils'
import { PrismaPGlite } from 'pglite-prisma-adapter'
import { PGLITE_EXTENSIONS } from './pglite-extensions.ts'

/**
 * Databases for the schema engine's diff of the migrations against schema.prisma (`bun run
 * db:new-migration`, the migrations test): in-memory PGlites with the server's extensions, the shadow
 * database included. The adapter's own shadow database is a PGlite without them, where the migration that
 * creates pg_trgm failed, so the diff proposed that migration's column and index again.
 */
export async function openDiffDatabases(): Promise<{
  adapterFactory: SqlMigrationAwareDriverAdapterFactory
  close(): Promise<void>
}> {
  const opened: PGlite[] = []
  const open = async () => {
    const pglite = await PGlite.create({ extensions: PGLITE_EXTENSIONS })
    opened.push(pglite)
    return new PrismaPGlite(pglite)
  }
  const main = await open()
  return {
    adapterFactory: {
      provider: main.provider,
      adapterName: main.adapterName,
      connect: () => main.connect(),
      connectToShadowDb: async () => (await open()).connect(),
    },
    async close() {
      await Promise.all(opened.map((pglite) => pglite.close().catch(() => {})))
    },
  }
}
