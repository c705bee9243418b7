/**
 * db/pglite-collect.ts on a real PGlite served over its socket as the server serves it (pglite-socket, the
 * `pg` driver): every statement and answer passes through unchanged, and the thread collects once per
 * PGLITE_COLLECT_AFTER_BYTES of traffic, after the statement that crossed it.
 */
import { describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import { PGLiteSocketServer } from '@electric-sql/pglite-socket'
import pg from 'pg'
import { collectAfterTraffic, PGLITE_COLLECT_AFTER_BYTES } from '../db/pglite-collect.ts'

describe('the embedded database collects after heavy traffic', () => {
  test('answers unchanged; one collection per PGLITE_COLLECT_AFTER_BYTES of statements and answers', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'pglite-collect-'))
    const db = await PGlite.create()
    let collections = 0
    collectAfterTraffic(db, () => collections++)
    const server = new PGLiteSocketServer({ db, path: join(folder, '.s.PGSQL.5432') })
    await server.start()
    const client = new pg.Client({ host: folder, database: 'postgres', user: 'postgres' })
    try {
      await client.connect()
      await client.query('CREATE TABLE t (n int, data text)')
      const text = 'x'.repeat(256 * 1024)
      // ~256 KiB in each statement, ~256 KiB back from each read.
      for (let n = 0; n < 6; n++) await client.query('INSERT INTO t VALUES ($1, $2)', [n, text])
      await Bun.sleep(10)
      expect(collections).toBe(0)
      for (let n = 0; n < 12; n++) {
        const { rows } = await client.query<{ data: string }>('SELECT data FROM t WHERE n = $1', [n % 6])
        expect(rows[0]!.data).toBe(text)
      }
      await Bun.sleep(10)
      // 1.5 MiB in, 3 MiB out: past 4 MiB once.
      expect(PGLITE_COLLECT_AFTER_BYTES).toBe(4 * 1024 * 1024)
      expect(collections).toBe(1)
    } finally {
      await client.end().catch(() => {})
      await server.stop()
      await db.close()
      rmSync(folder, { recursive: true, force: true })
    }
  })
})
