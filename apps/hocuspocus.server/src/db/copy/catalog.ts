/**
 * What a database holds, read from PostgreSQL's own catalog (pg_class, pg_attribute, pg_index,
 * pg_constraint), so `db copy` and its verification follow the schema as the migrations made it: a table
 * or column added by a later migration is copied without a change here. The same queries run on PGlite
 * (the source) and PostgreSQL (the target).
 */

/** One SQL statement run on a connection; every value of every row comes back as text (or null). */
export type Sql = (text: string, params?: Array<string | null>) => Promise<Array<Array<string | null>>>

export type Column = {
  name: string
  /** format_type(): what a text parameter is cast to on insert (`uuid`, `token_scope[]`, `bytea`). */
  type: string
  /** A generated column: computed by the target, never inserted. */
  generated: boolean
}

export type Table = {
  name: string
  columns: Column[]
  /** The primary key's columns, in the key's order: tables are read in pages along it. */
  key: Column[]
}

export type Catalog = {
  /** Every table of the schema but the migrations' record, parents before the tables that refer to them. */
  tables: Table[]
  /** Sequences (serial and identity columns' counters), by name. */
  sequences: string[]
}

/** The schema the migrations create; the copy reads and writes this one only. */
export const SCHEMA = 'public'
/** The migrations' own record: each database keeps the one its migrations wrote. */
export const MIGRATIONS_TABLE = '_prisma_migrations'

/** A name as an SQL identifier, quoted. */
export const ident = (name: string) => `"${name.replaceAll('"', '""')}"`
/** A table of the schema, qualified and quoted. */
export const qualified = (name: string) => `${ident(SCHEMA)}.${ident(name)}`

export async function readCatalog(sql: Sql): Promise<Catalog> {
  const tableRows = await sql(
    `SELECT c.relname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND NOT c.relispartition AND c.relname <> $2
      ORDER BY c.relname`,
    [SCHEMA, MIGRATIONS_TABLE],
  )
  const columnRows = await sql(
    `SELECT c.relname::text, a.attname::text, format_type(a.atttypid, a.atttypmod), (a.attgenerated <> '')::text
       FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped
      ORDER BY c.relname, a.attnum`,
    [SCHEMA],
  )
  const keyRows = await sql(
    `SELECT c.relname::text, a.attname::text
       FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid JOIN pg_namespace n ON n.oid = c.relnamespace
       CROSS JOIN LATERAL unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, position)
       JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
      WHERE n.nspname = $1 AND i.indisprimary
      ORDER BY c.relname, k.position`,
    [SCHEMA],
  )
  const referenceRows = await sql(
    `SELECT c.relname::text, p.relname::text
       FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_class p ON p.oid = k.confrelid
       JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND k.contype = 'f'`,
    [SCHEMA],
  )
  const sequenceRows = await sql(
    `SELECT c.relname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relkind = 'S' ORDER BY c.relname`,
    [SCHEMA],
  )
  const tables = new Map<string, Table>()
  for (const [name] of tableRows) tables.set(name!, { name: name!, columns: [], key: [] })
  for (const [table, name, type, generated] of columnRows) {
    tables.get(table!)?.columns.push({ name: name!, type: type!, generated: generated === 'true' })
  }
  for (const [table, name] of keyRows) {
    const found = tables.get(table!)
    const column = found?.columns.find((c) => c.name === name)
    if (column) found!.key.push(column)
  }
  for (const table of tables.values()) {
    if (table.key.length === 0) {
      throw new Error(
        `table ${table.name} has no primary key: db copy reads a table in pages along its primary key; give it one in prisma/schema.prisma`,
      )
    }
  }
  const references = referenceRows.map(([from, to]) => [from!, to!] as const)
  return {
    tables: parentsFirst([...tables.values()], references),
    sequences: sequenceRows.map(([name]) => name!),
  }
}

/**
 * Tables ordered so that every table comes after the tables its foreign keys refer to (rows are inserted
 * in this order, so each reference finds its row). A table's reference to itself is left to the order of
 * its rows; a cycle between tables has no such order and is refused, naming the tables.
 */
export function parentsFirst(tables: Table[], references: ReadonlyArray<readonly [string, string]>): Table[] {
  const byName = new Map(tables.map((t) => [t.name, t]))
  const parents = new Map<string, Set<string>>(tables.map((t) => [t.name, new Set()]))
  for (const [from, to] of references) {
    if (from !== to && byName.has(from) && byName.has(to)) parents.get(from)!.add(to)
  }
  const ordered: Table[] = []
  const placed = new Set<string>()
  while (ordered.length < tables.length) {
    const ready = tables.filter(
      (t) => !placed.has(t.name) && [...parents.get(t.name)!].every((p) => placed.has(p)),
    )
    if (ready.length === 0) {
      const left = tables.filter((t) => !placed.has(t.name)).map((t) => t.name)
      throw new Error(
        `tables ${left.join(', ')} refer to each other in a cycle: db copy cannot order their rows`,
      )
    }
    for (const table of ready) {
      ordered.push(table)
      placed.add(table.name)
    }
  }
  return ordered
}

/**
 * Rows of every table (the migrations' record excluded), for "is this database empty": a table with a row
 * in any schema but PostgreSQL's own counts, not only the ones the migrations make.
 */
export async function tablesWithRows(sql: Sql): Promise<string[]> {
  const tables = await sql(
    `SELECT n.nspname::text, c.relname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relkind IN ('r', 'p') AND n.nspname NOT IN ('pg_catalog', 'information_schema')
        AND n.nspname NOT LIKE 'pg\\_%' AND NOT (n.nspname = $1 AND c.relname = $2)
      ORDER BY 1, 2`,
    [SCHEMA, MIGRATIONS_TABLE],
  )
  const withRows: string[] = []
  for (const [schema, name] of tables) {
    const [row] = await sql(`SELECT EXISTS (SELECT 1 FROM ${ident(schema!)}.${ident(name!)})::text`)
    if (row?.[0] === 'true') withRows.push(schema === SCHEMA ? name! : `${schema}.${name}`)
  }
  return withRows
}

/** Names of the migrations recorded as applied (finished, not rolled back); empty without the table. */
export async function appliedMigrations(sql: Sql): Promise<string[]> {
  const [exists] = await sql(`SELECT (to_regclass($1) IS NOT NULL)::text`, [`${SCHEMA}.${MIGRATIONS_TABLE}`])
  if (exists?.[0] !== 'true') return []
  const rows = await sql(
    `SELECT migration_name FROM ${qualified(MIGRATIONS_TABLE)}
      WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL ORDER BY migration_name`,
  )
  return rows.map(([name]) => name!)
}
