/**
 * The two ends of a copy as `Sql` functions: the embedded database through a connection of its own from
 * the Prisma adapter factory (rows as arrays, and on PGlite's thread a connection the health probe waits
 * for, as for a migration), and PostgreSQL through a `pg` client of its own (one session, so the copy's
 * transaction is one transaction).
 */
import type { SqlDriverAdapter, SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils'
import { Client } from 'pg'
import type { Sql } from './catalog.ts'

const asText = (v: unknown): string | null =>
  v === null || v === undefined ? null : typeof v === 'string' ? v : String(v)

export async function adapterSql(
  factory: SqlMigrationAwareDriverAdapterFactory,
): Promise<{ sql: Sql; close(): Promise<void> }> {
  const adapter: SqlDriverAdapter = await factory.connect()
  const sql: Sql = async (text, params = []) => {
    const result = await adapter.queryRaw({
      sql: text,
      args: params,
      argTypes: params.map(() => ({ scalarType: 'string', arity: 'scalar' })),
    })
    return result.rows.map((row) => row.map(asText))
  }
  return { sql, close: () => adapter.dispose().catch(() => {}) }
}

/** A PostgreSQL URL with its password hidden, for messages. */
export function redactedUrl(url: string): string {
  try {
    const parsed = new URL(url)
    if (parsed.password) parsed.password = '***'
    return parsed.toString()
  } catch {
    return '(an unparsable URL)'
  }
}

export async function postgresSql(
  url: string,
): Promise<{ sql: Sql; client: Client; close(): Promise<void> }> {
  const client = new Client({ connectionString: url })
  await client.connect()
  const sql: Sql = async (text, params = []) => {
    const result = await client.query({ text, values: params, rowMode: 'array' })
    return (result.rows as unknown[][]).map((row) => row.map(asText))
  }
  return { sql, client, close: () => client.end().catch(() => {}) }
}
