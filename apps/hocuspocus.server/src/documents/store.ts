/**
 * Writing a document's content: the merged Yjs state, the title (its first heading), the full-text
 * vector and, now and then, a version snapshot. One transaction, so search and content never disagree.
 */
import { cutText, MAX_TITLE_CHARS, type OutlineNode } from '@collab/doc-schema'
import * as Y from 'yjs'
import type { Prisma } from '../db/generated/client.ts'
import { storableText } from '../db/storable-text.ts'

/** A new version snapshot is taken when the newest one is older than this. */
export const VERSION_INTERVAL_MS = 10 * 60_000
/** Versions kept per document; older ones are deleted as new ones are taken. Bounds history to ~N × state size. */
export const MAX_VERSIONS_PER_DOCUMENT = 20
/**
 * Characters of document text fed to the full-text index. PostgreSQL refuses a tsvector over 1 MiB;
 * this keeps every document well inside that while indexing the first ~100 pages of text.
 */
export const MAX_SEARCH_TEXT_CHARS = 200_000
/** Stored when a document's first heading is empty, so listings never show a blank title. */
export const UNTITLED = 'Untitled'

/**
 * What JSON.stringify writes for a NUL (`\u0000`) or a lone surrogate (`\ud800`…`\udfff`): jsonb refuses
 * both (22P05), and valid text never produces them (pairs are written as themselves). Found by hand: one
 * NUL typed into a heading made every later store of the document fail, through the stored outline.
 */
const UNSTORABLE_ESCAPE = /\\u(?:0000|d[89a-f])/i

/**
 * JSON text a jsonb column takes: every string in it, keys included, through `storableText`. For JSON
 * built from content (the outline: titles, section ids). Clean JSON (nearly always) is stringified once.
 */
export function storableJSON(value: unknown): string {
  const json = JSON.stringify(value)
  // Also true for text that merely shows such an escape (a title reading "\u0000"): harmless, slower path.
  if (json === undefined || !UNSTORABLE_ESCAPE.test(json)) return json
  return JSON.stringify(value, (_key, item: unknown) => {
    if (typeof item === 'string') return storableText(item)
    if (item === null || typeof item !== 'object' || Array.isArray(item)) return item
    const keys = Object.keys(item)
    if (keys.every((key) => storableText(key) === key)) return item
    const record = item as Record<string, unknown>
    return Object.fromEntries(keys.map((key) => [storableText(key), record[key]]))
  })
}

/** What a store writes: the state, its title and search text, and what the store step derived. */
export type StoredContent = {
  state: Uint8Array
  title: string
  text: string
  /** The outline of `state` (readOutline's tree); stored for cold outline reads. Unknown: omit. */
  outline?: OutlineNode[]
  /** Y.encodeStateVector of the document `state` was encoded from (to judge a merged outline). */
  vector?: Uint8Array
}

/** Whether state vector `ours` has every update `theirs` has. */
function covers(ours: Uint8Array, theirs: Uint8Array): boolean {
  const have = Y.decodeStateVector(ours)
  for (const [client, clock] of Y.decodeStateVector(theirs)) if ((have.get(client) ?? 0) < clock) return false
  return true
}

export type StoreOptions = {
  /**
   * Merge with the stored state instead of replacing it (several instances share the database). Each
   * instance stores its own full copy; one that has not yet received another instance's change would
   * otherwise overwrite a stored, acknowledged change until its next store. The row is locked, so two
   * instances' stores run one after the other and each keeps what the other wrote.
   */
  mergeWithStored?: boolean
  /**
   * Store the Yjs state alone: no outline (cold reads decode the state), title and search text left as
   * they were. The fallback when deriving or storing those failed, so what editors wrote is durable anyway.
   */
  stateOnly?: boolean
}

export async function storeContent(
  tx: Prisma.TransactionClient,
  documentId: string,
  content: StoredContent,
  options: StoreOptions = {},
): Promise<void> {
  let state = content.state
  let outline = content.outline ?? null
  if (options.mergeWithStored) {
    const rows = await tx.$queryRaw<Array<{ state: string }>>`
      SELECT encode(state, 'base64') AS state FROM document_states
       WHERE document_id = ${documentId}::uuid FOR UPDATE`
    const stored = rows[0]?.state
    if (stored) {
      const storedBytes = new Uint8Array(Buffer.from(stored, 'base64'))
      // Always merged, even when our state vector covers the stored one: a deletion does not advance a
      // state vector, so only the merge keeps a deletion the other instance stored.
      state = Y.mergeUpdates([storedBytes, state])
      // Our outline describes our copy: kept only when the stored state holds nothing we lack (up to a
      // deletion still on its way, which the next store corrects).
      if (!content.vector || !covers(content.vector, Y.encodeStateVectorFromUpdate(storedBytes)))
        outline = null
    }
  }
  if (options.stateOnly) outline = null
  // Raw SQL, not Prisma's upsert: that returns the row, which reads the whole state back. The state goes
  // as base64 text decoded by the database: PGlite's bytea parameter encoding took ~210 ms per MiB,
  // base64 text ~35 ms (measured on this machine; PostgreSQL is not slower either way).
  const base64 = Buffer.from(state.buffer, state.byteOffset, state.byteLength).toString('base64')
  await tx.$executeRaw`
    INSERT INTO document_states (document_id, state, byte_size, outline, updated_at)
    VALUES (${documentId}::uuid, decode(${base64}, 'base64'), ${state.byteLength},
            ${outline === null ? null : storableJSON(outline)}::jsonb, now())
    ON CONFLICT (document_id)
    DO UPDATE SET state = EXCLUDED.state, byte_size = EXCLUDED.byte_size, outline = EXCLUDED.outline,
                  updated_at = EXCLUDED.updated_at`
  if (options.stateOnly) {
    await tx.$executeRaw`UPDATE documents SET content_updated_at = now() WHERE id = ${documentId}::uuid`
  } else {
    const title = cutText(storableText(content.title).trim(), MAX_TITLE_CHARS) || UNTITLED
    const text = cutText(storableText(content.text), MAX_SEARCH_TEXT_CHARS)
    await tx.$executeRaw`
    UPDATE documents
       SET title = ${title},
           content_updated_at = now(),
           search_vector = setweight(to_tsvector('simple', ${title}), 'A')
                        || setweight(to_tsvector('simple', ${text}), 'B')
     WHERE id = ${documentId}::uuid`
  }
  const newest = await tx.documentVersion.findFirst({
    where: { documentId },
    orderBy: { createdAt: 'desc' },
    select: { createdAt: true },
  })
  if (!newest || Date.now() - newest.createdAt.getTime() >= VERSION_INTERVAL_MS) {
    // Copied inside the database from the row just written: the state is not sent a second time.
    await tx.$executeRaw`
      INSERT INTO document_versions (document_id, state, byte_size)
      SELECT document_id, state, byte_size FROM document_states WHERE document_id = ${documentId}::uuid`
    await tx.$executeRaw`
      DELETE FROM document_versions
       WHERE document_id = ${documentId}::uuid
         AND id NOT IN (SELECT id FROM document_versions WHERE document_id = ${documentId}::uuid
                         ORDER BY created_at DESC, id DESC LIMIT ${MAX_VERSIONS_PER_DOCUMENT})`
  }
}
