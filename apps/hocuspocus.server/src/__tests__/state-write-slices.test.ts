/**
 * A large state is written in slices of STATE_WRITE_SLICE_BYTES (documents/store.ts), each statement's
 * parameter small: Prisma keeps the last 100 debug messages of its calls whether or not debugging is on,
 * and a raw statement's messages hold its parameters, so 768 KiB slices (1 MiB of base64 each) kept ~105 MB
 * of the event loop's heap held after a 22 MB state's write (a heap snapshot), 256 KiB slices ~75 MB.
 * Checked: no statement writing an import's state carries a parameter longer than one write slice's base64,
 * and the state joined from the slices is the document imported; and after a large import and a large
 * update appended to the log, neither Prisma's histories (db/statement-history.ts empties them) nor
 * anything else holds a string of a large parameter's size (a heap snapshot): before, the adapter's
 * history alone held ~10 million characters of the last hundred statements' parameters.
 */
import { describe, expect, test } from 'bun:test'
import { DATABASE_KIND, longestString, useWatchedServices } from '@collab/test-support/database'
import { getLogs as adapterPgHistory } from '@prisma/debug'
import { getLogs as pgliteAdapterHistory } from 'prisma-debug-pglite-adapter'
import * as Y from 'yjs'
import { LARGE_PARAMETER_CHARS } from '../db/statement-history.ts'
import { bodyText } from '../documents/export-markdown.ts'
import { readSnapshotState } from '../documents/sliced-read.ts'
import { STATE_WRITE_SLICE_BYTES } from '../documents/store.ts'

/**
 * Prose of about `bytes` characters in sections (its state is about as large). Long sections (~18 KB):
 * the build's work goes by blocks more than by bytes, and the state's size is what the slices are about
 * (2 MiB in sections of ~1.8 KB: ~4,600 blocks, 2.25 MB of state, ~1.4 s to build and render here; in
 * these, ~230 blocks, 2.13 MB, ~0.75 s).
 */
function prose(bytes: number): string {
  const sentence = 'Some words of a long manual, written out so that its state passes several write slices. '
  const parts = ['# Manual\n']
  for (let i = 0, size = 0; size < bytes; i++) {
    const part = `\n## Part ${i}\n\n${sentence.repeat(200)}\n`
    parts.push(part)
    size += part.length
  }
  return parts.join('')
}

/** Sizes of the strings on the heap of at least `chars` characters, after a full collection. */
function stringsOnHeap(chars: number): number[] {
  Bun.gc(true)
  const snapshot = Bun.generateHeapSnapshot() as unknown as { nodes: number[]; nodeClassNames: string[] }
  const sizes: number[] = []
  // A node is [id, size, class name's index, flags].
  for (let i = 0; i < snapshot.nodes.length; i += 4) {
    const size = snapshot.nodes[i + 1] as number
    if (size >= chars && snapshot.nodeClassNames[snapshot.nodes[i + 2] as number] === 'string')
      sizes.push(size)
  }
  return sizes
}

/**
 * Sizes of the strings of at least `chars` characters held now that were not in `before`. The collector
 * scans the stack conservatively, so a string just let go may survive a collection or two while a stale
 * pointer to it lingers there: looked at again a few turns later (up to five times) before it counts as
 * held. Something that holds it (a history) holds it every time.
 */
async function heldSince(before: number[], chars: number): Promise<number[]> {
  let held: number[] = []
  for (let attempt = 0; attempt < 5; attempt++) {
    held = stringsOnHeap(chars).filter((size) => !before.includes(size))
    if (held.length === 0) break
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return held
}

let longestParameter = 0
/**
 * The file's database on the embedded database's own thread (the default) or PostgreSQL, opened once for
 * the heap test on that thread and the slices' test after it (each its own user and document; the heap
 * test first, so it starts from a client that has run nothing large, as on a database of its own): the
 * real client, watched: every raw statement's arguments are measured (transactions' too).
 */
const opened = useWatchedServices(({ operation, sql, values }) => {
  // The statements of the state's slices (its search text and outline go whole in theirs).
  if (operation === '$executeRaw' && /INSERT INTO document_state_parts/.test(sql))
    longestParameter = Math.max(longestParameter, longestString(values))
})

// PGlite on the server's thread talks through pglite-prisma-adapter, whose @prisma/debug is another copy.
const THREADS = DATABASE_KIND === 'pglite' ? (['worker', 'main'] as const) : (['worker'] as const)

for (const thread of THREADS)
  describe(`Prisma keeps none of a large write's parameters (${DATABASE_KIND}${DATABASE_KIND === 'pglite' ? `, ${thread} thread` : ''})`, () => {
    const watched = thread === 'worker' ? opened : useWatchedServices(() => {}, { pgliteThread: thread })

    test("after a large import and a large append, none of their statements' parameters stays held", async () => {
      const { db, services } = watched()
      const owner = await services.users.add('bea')
      if (owner.kind === 'error') throw new Error(owner.message)
      const markdown = prose(2 << 20).replaceAll('Manual', 'Atlas')
      // An update of ~600 KiB for the log: one long paragraph typed after the import.
      const doc = new Y.Doc()
      const paragraph = new Y.XmlElement('paragraph')
      paragraph.insert(0, [new Y.XmlText('a long pasted paragraph '.repeat(25_000))])
      doc.getXmlFragment('default').push([paragraph])
      const update = Y.encodeStateAsUpdate(doc)
      doc.destroy()
      expect(update.byteLength).toBeGreaterThan(LARGE_PARAMETER_CHARS * 8)
      const before = stringsOnHeap(LARGE_PARAMETER_CHARS)
      const imported = await services.documents.importMarkdown(owner.value.id, {
        markdown,
        fallbackTitle: 'Atlas',
      })
      if (imported.kind === 'error') throw new Error(imported.message)
      await services.documents.appendUpdate(imported.value.document.id, update)
      // One small statement after, as any traffic: the driver's side keeps the statement it ran last until
      // the next one (one statement, not Prisma's hundred; measured so).
      await db.prisma.$queryRaw`SELECT 1`
      // The adapters' own histories (@prisma/debug of @prisma/adapter-pg and of pglite-prisma-adapter) hold
      // no large text: before, the last hundred statements' slices (~350,000 characters of base64 each).
      expect(adapterPgHistory(Number.MAX_SAFE_INTEGER).length).toBeLessThan(LARGE_PARAMETER_CHARS)
      expect(pgliteAdapterHistory(Number.MAX_SAFE_INTEGER).length).toBeLessThan(LARGE_PARAMETER_CHARS)
      // And nothing else does, the client runtime's own history included: no string of a large
      // parameter's size is held after the write that was not held before it (the state's slices, the
      // update's base64, the search text, the outline's JSON).
      expect(await heldSince(before, LARGE_PARAMETER_CHARS)).toEqual([])
    }, 120_000)
  })

describe(`a large state is written in small slices (${DATABASE_KIND})`, () => {
  test('no statement carries more than one write slice; the state read back is the one built', async () => {
    const { db, services } = opened()
    const owner = await services.users.add('ann')
    if (owner.kind === 'error') throw new Error(owner.message)
    longestParameter = 0
    const imported = await services.documents.importMarkdown(owner.value.id, {
      markdown: prose(2 << 20),
      fallbackTitle: 'Manual',
    })
    if (imported.kind === 'error') throw new Error(imported.message)
    const stored = await readSnapshotState(db.prisma, imported.value.document.id)
    expect(stored.snapshot!.byteLength).toBeGreaterThan(6 * STATE_WRITE_SLICE_BYTES)
    expect(longestParameter).toBeGreaterThan(0) // the slices' statements were seen
    // Its base64 (4/3 of its bytes); before, 768 KiB slices went as 1 MiB of text each.
    expect(longestParameter).toBeLessThanOrEqual((STATE_WRITE_SLICE_BYTES / 3) * 4 + 4)
    // The bytes joined in order: the state decodes to the document imported.
    const exported = await services.documents.markdownOf(imported.value.document, 'ann')
    if (exported.kind === 'error') throw new Error(exported.message)
    const text = await bodyText(exported.value)
    const parts = prose(2 << 20).match(/## Part \d+/g)
    expect(text.match(/## Part \d+/g)).toEqual(parts)
    expect(
      text.endsWith(
        `${'Some words of a long manual, written out so that its state passes several write slices.'}\n`,
      ),
    ).toBe(true)
  }, 120_000)
})
