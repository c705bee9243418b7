/**
 * A large state is written in slices of STATE_WRITE_SLICE_BYTES (documents/store.ts), each statement's
 * parameter small: Prisma keeps the last 100 debug messages of its calls whether or not debugging is on,
 * and a raw statement's messages hold its parameters, so 768 KiB slices (1 MiB of base64 each) kept ~105 MB
 * of the event loop's heap held after a 22 MB state's write (a heap snapshot). Checked: no statement writing
 * an import's state carries a parameter longer than one write slice's base64, and the state joined from
 * the slices is the document imported.
 */
import { describe, expect, test } from 'bun:test'
import { DATABASE_KIND, longestString, useWatchedServices } from '@collab/test-support/database'
import { readSnapshotState } from '../documents/sliced-read.ts'
import { STATE_WRITE_SLICE_BYTES } from '../documents/store.ts'
import { markdownText } from '../documents/worker/export.ts'

/** Prose of about `bytes` characters in sections (its state is about as large). */
function prose(bytes: number): string {
  const sentence = 'Some words of a long manual, written out so that its state passes several write slices. '
  const parts = ['# Manual\n']
  for (let i = 0, size = 0; size < bytes; i++) {
    const part = `\n## Part ${i}\n\n${sentence.repeat(20)}\n`
    parts.push(part)
    size += part.length
  }
  return parts.join('')
}

describe(`a large state is written in small slices (${DATABASE_KIND})`, () => {
  let longestParameter = 0
  // The real client, watched: every raw statement's arguments are measured (transactions' too).
  const opened = useWatchedServices(({ operation, sql, values }) => {
    // The statements of the state's slices (its search text and outline go whole in theirs).
    if (operation === '$executeRaw' && /INSERT INTO state_\w+ VALUES/.test(sql))
      longestParameter = Math.max(longestParameter, longestString(values))
  })

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
    const text = markdownText(exported.value)
    const parts = prose(2 << 20).match(/## Part \d+/g)
    expect(text.match(/## Part \d+/g)).toEqual(parts)
    expect(
      text.endsWith(
        `${'Some words of a long manual, written out so that its state passes several write slices.'}\n`,
      ),
    ).toBe(true)
  }, 120_000)
})
