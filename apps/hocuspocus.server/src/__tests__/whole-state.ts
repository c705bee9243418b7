/**
 * The whole state of a document_states row (`alias`) as one value, its parts joined by the database: for
 * tests that compare with a read as it was made before states were read in slices and stored in parts
 * (documents/sliced-read.ts). The server never reads a state so.
 */
import { Prisma } from '../db/generated/client.ts'

export function wholeSnapshotSql(alias: string): Prisma.Sql {
  const row = Prisma.raw(alias)
  return Prisma.sql`CASE WHEN ${row}.parts = 0 THEN ${row}.state ELSE
    (SELECT string_agg(p.data, ''::bytea ORDER BY p.n) FROM document_state_parts p
      WHERE p.document_id = ${row}.document_id) END`
}

/** The same for a document_updates row (`alias`): its update as one value, its parts joined. */
export function wholeUpdateSql(alias: string): Prisma.Sql {
  return Prisma.raw(wholeUpdateText(alias))
}

/** wholeUpdateSql as SQL text, for a test that queries through the `pg` driver. */
export function wholeUpdateText(alias: string): string {
  return `CASE WHEN ${alias}.parts = 0 THEN ${alias}."update" ELSE
    (SELECT string_agg(p.data, ''::bytea ORDER BY p.n) FROM document_update_parts p
      WHERE p.update_id = ${alias}.id) END`
}
