/**
 * The embedded database's maintenance (db/maintenance.ts): PGlite has no autovacuum, so every stored
 * state left its old version behind and the table grew without end. After a maintenance pass, the same
 * number of stores reuses the reclaimed space instead.
 */
import { describe, expect, test } from 'bun:test'
import { randomBytes } from 'node:crypto'
import { DATABASE_KIND } from '@collab/test-support/database'
import { userWithToken, useTestServer } from '@collab/test-support/server'
import { maintainOnce } from '../db/maintenance.ts'
import type { RunningServer } from '../server.ts'

/** One stored state: random, so it does not compress and each store writes a full TOASTed version. */
const STATE_BYTES = 100_000
/**
 * Stores per churn: 4 MB of dead versions, far above a page's worth of noise, so the halving below is the
 * vacuum's doing. 120 stores (12 MB a churn, twice) held the file at ~10 s of CPU, and the property does
 * not depend on the count: each store leaves its old version, and a vacuum frees them all.
 */
const STORES = 40

describe.skipIf(DATABASE_KIND !== 'pglite')(
  'embedded database maintenance (PGlite only: PostgreSQL autovacuums)',
  () => {
    let server: RunningServer
    useTestServer((s) => {
      server = s
    })

    test('a maintenance pass vacuums document_states, and later stores reuse the space', async () => {
      const { user } = await userWithToken(server, 'vacuum')
      const created = await server.services.documents.create(user.id, { title: 'Churn' })
      if (created.kind === 'error') throw new Error(created.message)
      const { prisma } = server.services.db
      const size = async () =>
        Number(
          (
            await prisma.$queryRaw<Array<{ bytes: bigint }>>`
            SELECT pg_total_relation_size('document_states') AS bytes`
          )[0]!.bytes,
        )
      const churn = async () => {
        const before = await size()
        for (let i = 0; i < STORES; i++) {
          // Random bytes do not compress: each store writes a full new TOASTed version.
          const state = new Uint8Array(randomBytes(STATE_BYTES))
          await server.services.documents.storeState(created.value.id, { state, title: 'Churn', text: '' })
        }
        return (await size()) - before
      }

      const unmaintained = await churn()
      expect(unmaintained).toBeGreaterThan(STORES * STATE_BYTES * 0.8) // every old version kept
      const run = await maintainOnce(server.services.db)
      expect(run.vacuumed).toContain('document_states')
      const maintained = await churn()
      expect(maintained).toBeLessThan(unmaintained / 2)
    })
  },
)
