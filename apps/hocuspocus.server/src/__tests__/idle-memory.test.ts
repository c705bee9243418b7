/**
 * What an idle server keeps in memory that it need not (issue 30, idle RSS): PGlite's 6 MB file bundle was
 * read into memory on the server's thread to be handed to the database thread, and held for the process's
 * life; now the database thread is handed the bundle's file and reads it itself. RSS itself is measured by
 * the bench (bench/notes.md), not asserted here.
 */
import { describe, expect, test } from 'bun:test'
import { loadPgliteAssets } from '../db/pglite-thread.ts'

describe("an idle server's memory", () => {
  test("PGlite's file bundle is handed to the database thread as its file, not as bytes held by the server's thread", async () => {
    const { fsBundle } = await loadPgliteAssets()
    // A file-backed Blob (Bun.file) has the file's path as its name; bytes read into a Blob have none.
    expect((fsBundle as Blob & { name?: string }).name ?? '').toEndWith('/pglite.data')
  }, 60_000)
})
