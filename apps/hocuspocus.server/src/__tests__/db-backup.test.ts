/**
 * `db backup` while the server runs and an editor types, then `db restore` into a fresh database (a new
 * folder, or a new PostgreSQL database), on the database the suite runs on: the restored documents hold
 * an unbroken prefix of what was typed (a consistent moment, never half of one store), at least what was
 * stored before the backup began, and every other table is equal, value for value. Refusals: a target
 * that is not empty, a server holding the folder, a file that exists, pg_dump missing. One server for the
 * file, in the test process (the CLI hands it the backup through its admin socket, as to any server); one
 * backup and one restore.
 */
import { describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { useCliDatabase } from '@collab/test-support/cli'
import {
  createTestDatabase,
  DATABASE_KIND,
  type TestDatabase,
  withServices,
} from '@collab/test-support/database'
import { appendParagraph, textOf } from '@collab/test-support/documents'
import { readMetric } from '@collab/test-support/metrics'
import { type Run, runCli } from '@collab/test-support/process'
import { connectProvider } from '@collab/test-support/provider'
import { eventually } from '@collab/test-support/server'
import * as Y from 'yjs'
import { readCatalog } from '../db/copy/catalog.ts'
import { adapterSql } from '../db/copy/connections.ts'
import { type TableDigest, tableDigest } from '../db/copy/digest.ts'
import type { Services } from '../services.ts'

/** Every table's fingerprint but the documents' own (the editor kept typing after the backup). */
async function digestsOf(services: Services): Promise<Record<string, TableDigest>> {
  const { sql, close } = await adapterSql(services.db.adapterFactory)
  try {
    const out: Record<string, TableDigest> = {}
    for (const table of (await readCatalog(sql)).tables) {
      if (!table.name.startsWith('document')) out[table.name] = await tableDigest(sql, table)
    }
    return out
  } finally {
    await close()
  }
}

/** The numbers of the paragraphs "p N" in a text, in order. */
const typed = (text: string) => [...text.matchAll(/\bp(\d+)\b/g)].map((m) => Number(m[1]))

describe(`db backup and db restore while the server runs (${DATABASE_KIND})`, () => {
  const run = useCliDatabase({
    server: 'in-process',
    prepare: async (services) => {
      const user = await services.users.add('alice')
      if (user.kind === 'error') throw new Error(user.message)
      const token = await services.tokens.issue(user.value.id, { scopes: ['read', 'write'] })
      const doc = await services.documents.create(user.value.id, { title: 'Log' })
      if (token.kind === 'error') throw new Error(token.message)
      if (doc.kind === 'error') throw new Error(doc.message)
      return { token: token.value.token, room: doc.value.room }
    },
  })
  const folder = mkdtempSync(join(tmpdir(), 'collab-backup-'))
  const file = join(folder, 'backup')
  let backup: Run
  let storedBefore = 0
  let fresh: TestDatabase
  const freshEnv = () => ({ DATA_DIR: fresh.dataDir, DATABASE_URL: fresh.databaseUrl ?? '' })

  test('a backup taken while an editor types is written by the process that holds the database', async () => {
    const editor = connectProvider(run.inProcess!.url, run.prepared.room, run.prepared.token)
    await editor.ready
    const stores = () => readMetric(run.inProcess!.url, 'collab_document_stores_total')
    const before = await stores()
    for (storedBefore = 1; storedBefore <= 5; storedBefore++) appendParagraph(editor.doc, `p${storedBefore}`)
    storedBefore--
    // The next store after these changes takes all five: they are stored before the backup starts.
    await eventually(async () => expect(await stores()).toBeGreaterThan(before), 30_000, 'a store of p1..p5')
    let typing = true
    const typist = (async () => {
      for (let n = storedBefore + 1; typing; n++) {
        appendParagraph(editor.doc, `p${n}`)
        await Bun.sleep(20)
      }
    })()
    backup = await run.cli('db', 'backup', file)
    typing = false
    await typist
    await Bun.sleep(1_000)
    editor.destroy()
    expect(backup.stderr).toBe('')
    expect(backup.exitCode).toBe(0)
    expect(backup.stdout).toContain(`wrote ${file}`)
    if (DATABASE_KIND === 'pglite') expect(backup.stdout).toContain('taken by the running server')
    else expect(backup.stdout).toContain('pg_dump')
    // A backup never replaces a file.
    const again = await run.cli('db', 'backup', file)
    expect({ code: again.exitCode, stderr: again.stderr }).toEqual({
      code: 1,
      stderr: expect.stringContaining('exists; name a new file'),
    })
  }, 60_000)

  test.skipIf(DATABASE_KIND !== 'pglite')('restore refuses the folder a running server holds', async () => {
    const refused = await run.cli('db', 'restore', file, '--force')
    expect(refused.exitCode).toBe(1)
    expect(refused.stderr).toContain('held by a running server')
  })

  test('the backup restores into a fresh database: a consistent prefix of the typing, every other table equal', async () => {
    fresh = await createTestDatabase({ empty: true })
    const restored = await runCli(['db', 'restore', file], freshEnv())
    expect(restored.stderr).toBe('')
    expect(restored.exitCode).toBe(0)
    const { text, digests } = await withServices(fresh, async (services) => {
      const loaded = await services.documents.loadState(run.prepared.room)
      const doc = new Y.Doc()
      if (loaded?.state) Y.applyUpdate(doc, loaded.state)
      return { text: textOf(doc), digests: await digestsOf(services) }
    })
    const numbers = typed(text)
    // Paragraphs 1..k, none missing in between: the state of one moment (k at least what was stored before).
    expect(numbers).toEqual(numbers.map((_, i) => i + 1))
    expect(numbers.length).toBeGreaterThanOrEqual(storedBefore)
    // The server's own tables now (the backup's source, read through the server that still holds it).
    expect(digests).toEqual(await digestsOf(run.inProcess!.services))
  }, 90_000)

  test('restore refuses a database that is not empty and says how to replace it', async () => {
    const refused = await runCli(['db', 'restore', file], freshEnv())
    expect(refused.exitCode).toBe(1)
    expect(refused.stderr).toContain(DATABASE_KIND === 'pglite' ? 'already holds a database' : 'is not empty')
    expect(refused.stderr).toContain('--force')
    await fresh.cleanup()
    rmSync(folder, { recursive: true, force: true })
  })

  test.skipIf(DATABASE_KIND !== 'postgres')('without pg_dump, backup says what to install', async () => {
    // A PATH with bun and nothing else.
    const bin = mkdtempSync(join(tmpdir(), 'collab-bin-'))
    symlinkSync(Bun.which('bun')!, join(bin, 'bun'))
    const result = await runCli(['db', 'backup', join(bin, 'none')], { ...run.env, PATH: bin })
    rmSync(bin, { recursive: true, force: true })
    expect(result.exitCode).toBe(1)
    expect(result.stderr).toContain('pg_dump: not found on PATH')
    expect(result.stderr).toContain('postgresql-client')
  })
})
