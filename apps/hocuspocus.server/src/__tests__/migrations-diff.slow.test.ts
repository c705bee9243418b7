/**
 * What `bun run db:new-migration` compares: schema.prisma against the migrations, through the schema
 * engine on two embedded databases of its own (every migration applied to a shadow database, then
 * diffed). ~15 s of CPU for one test, the whole of it the engine's work, so it is in the slow tier
 * (`bun run test:slow`, its own CI step); the migrations themselves are migrations.test.ts.
 */
import { describe, expect, test } from 'bun:test'
import { DATABASE_KIND } from '@collab/test-support/database'
import { openDiffDatabases } from '../db/diff-databases.ts'
import { diffSchemaAgainstMigrations } from '../db/migrations.ts'

describe('schema.prisma and the migrations', () => {
  // Once, on the PGlite pass: it needs no server database.
  test.skipIf(DATABASE_KIND !== 'pglite')(
    'agree: the schema engine proposes no change',
    async () => {
      const databases = await openDiffDatabases()
      try {
        // Its shadow database lacked pg_trgm once: the trigram migration failed there, and the diff
        // proposed that migration's column and index again. The partial index's predicate is compared
        // as PostgreSQL prints it back.
        expect(await diffSchemaAgainstMigrations(databases.adapterFactory)).toBe('')
      } finally {
        await databases.close()
      }
      // ~15 s of CPU: on a machine shared with other work it needs more than the default 60 s.
    },
    120_000,
  )
})
