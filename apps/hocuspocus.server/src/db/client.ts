/**
 * Prisma client factory: embedded PGlite in a data folder, or PostgreSQL when a URL is given.
 *
 * Both go through a driver adapter, so the generated client, the migrations and every query are the
 * same for both. The adapter factory is kept for the migration engine, which needs its own connection.
 */
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm'
import { PrismaPg } from '@prisma/adapter-pg'
import type { SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils'
import { PrismaPGlite } from 'pglite-prisma-adapter'
import { PrismaClient } from './generated/client.ts'

export type Database = {
  prisma: PrismaClient
  kind: 'pglite' | 'postgres'
  /** For the migration engine (schema-engine-wasm), which opens its own adapter connection. */
  adapterFactory: SqlMigrationAwareDriverAdapterFactory
  close(): Promise<void>
}

/**
 * The PostgreSQL extensions a migration may create, loaded into every embedded database (PostgreSQL
 * ships them as contrib): pg_trgm indexes the phrase match of find_documents and find_sections.
 */
export const PGLITE_EXTENSIONS = { pg_trgm }

/**
 * PostgreSQL's own page cache inside the embedded database (its default is 128MB). PGlite reads its files
 * through the operating system, whose cache holds recently read pages anyway, and the WebAssembly memory
 * of the buffers is resident for the process's life: 32MB took ~105 MiB off the idle server's RSS
 * (276 to 171 MiB for PGlite alone, measured) without slowing find_documents over 40,000 documents
 * (bench, --only=find). Set for each start, not written to the data folder's postgresql.conf.
 */
export const PGLITE_SHARED_BUFFERS = '32MB'

export type DatabaseTarget = { kind: 'pglite'; dir: string } | { kind: 'postgres'; url: string }

export function databaseTarget(config: { dataDir: string; databaseUrl: string | undefined }): DatabaseTarget {
  return config.databaseUrl
    ? { kind: 'postgres', url: config.databaseUrl }
    : { kind: 'pglite', dir: join(config.dataDir, 'pglite') }
}

export async function openDatabase(target: DatabaseTarget): Promise<Database> {
  if (target.kind === 'postgres') {
    const adapterFactory = new PrismaPg({ connectionString: target.url, max: 10 })
    const prisma = new PrismaClient({ adapter: adapterFactory })
    return {
      prisma,
      kind: 'postgres',
      adapterFactory,
      close: () => prisma.$disconnect(),
    }
  }
  mkdirSync(target.dir, { recursive: true, mode: 0o700 })
  const pglite = await PGlite.create(target.dir, {
    extensions: PGLITE_EXTENSIONS,
    startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${PGLITE_SHARED_BUFFERS}`],
  })
  const adapterFactory = new PrismaPGlite(pglite)
  const prisma = new PrismaClient({ adapter: adapterFactory })
  return {
    prisma,
    kind: 'pglite',
    adapterFactory,
    async close() {
      await prisma.$disconnect()
      await pglite.close()
    },
  }
}
