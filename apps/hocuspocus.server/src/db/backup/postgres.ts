/**
 * Backups of a PostgreSQL database with PostgreSQL's own tools: pg_dump in its custom format (one
 * consistent snapshot: pg_dump reads every table in one repeatable-read transaction, while the server
 * keeps writing) and pg_restore. The password goes to them in PGPASSWORD, never on their command line
 * (which other users of the machine can read).
 */
import { Client } from 'pg'
import { type Sql, tablesWithRows } from '../copy/catalog.ts'
import { redactedUrl } from '../copy/connections.ts'
import { BackupRefused, partialFile } from './files.ts'

const CLIENT_PACKAGE =
  'postgresql-client (Debian: apt-get install postgresql-client-NN, NN the server major version)'

/** The tool's path, or a refusal saying what to install. */
function tool(name: 'pg_dump' | 'pg_restore'): string {
  const path = Bun.which(name)
  if (!path) {
    throw new BackupRefused(
      `${name}: not found on PATH; db backup and db restore use PostgreSQL's own tools: install ${CLIENT_PACKAGE}`,
    )
  }
  return path
}

/** The URL without its password (as --dbname), and the environment that carries the password. */
function connection(url: string): { dbname: string; env: Record<string, string> } {
  const parsed = new URL(url)
  const password = decodeURIComponent(parsed.password)
  parsed.password = ''
  return { dbname: parsed.toString(), env: password ? { PGPASSWORD: password } : {} }
}

/** The environment a tool starts with, given the password's: the caller's (config.ts's toolEnvironment). */
export type ToolEnvironment = (extra: Record<string, string>) => Record<string, string>

async function run(
  command: string[],
  env: Record<string, string>,
): Promise<{ code: number; stderr: string }> {
  const proc = Bun.spawn(command, { env, stdout: 'ignore', stderr: 'pipe' })
  const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited])
  return { code, stderr: stderr.trim() }
}

/** The major version of a tool (`pg_dump (PostgreSQL) 15.18 …` → 15). */
async function toolMajor(path: string): Promise<number> {
  const proc = Bun.spawn([path, '--version'], { stdout: 'pipe', stderr: 'ignore' })
  const text = await new Response(proc.stdout).text()
  await proc.exited
  return Number(/\) (\d+)/.exec(text)?.[1] ?? 0)
}

async function withClient<T>(url: string, use: (sql: Sql, client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url })
  try {
    await client.connect()
  } catch (error) {
    throw new BackupRefused(
      `DATABASE_URL: cannot connect to ${redactedUrl(url)}: ${(error as Error).message}`,
    )
  }
  const sql: Sql = async (text, params = []) =>
    ((await client.query({ text, values: params, rowMode: 'array' })).rows as unknown[][]).map((row) =>
      row.map((v) => (v === null ? null : String(v))),
    )
  try {
    return await use(sql, client)
  } finally {
    await client.end().catch(() => {})
  }
}

/** pg_dump must be at least the server's major version (it refuses newer servers): say so before it fails. */
async function checkVersions(path: string, url: string): Promise<void> {
  const [toolVersion, server] = await Promise.all([
    toolMajor(path),
    withClient(url, async (sql) => Number((await sql('SHOW server_version_num'))[0]?.[0] ?? 0)),
  ])
  const serverMajor = Math.floor(server / 10_000)
  if (toolVersion && serverMajor > toolVersion) {
    throw new BackupRefused(
      `${path}: version ${toolVersion} cannot read a PostgreSQL ${serverMajor} server; install postgresql-client-${serverMajor}`,
    )
  }
}

/** Writes a pg_dump archive (custom format) of the database at `url` to `file`; returns its size. */
export async function pgDump(url: string, file: string, environment: ToolEnvironment): Promise<number> {
  const path = tool('pg_dump')
  await checkVersions(path, url)
  const { dbname, env } = connection(url)
  const partial = partialFile(file)
  try {
    const { code, stderr } = await run(
      [
        path,
        '--format=custom',
        '--no-owner',
        '--no-privileges',
        `--file=${partial.path}`,
        `--dbname=${dbname}`,
      ],
      environment(env),
    )
    if (code !== 0) throw new Error(`pg_dump failed (exit ${code}): ${stderr}`)
    return partial.finish()
  } catch (error) {
    partial.abandon()
    throw error
  }
}

/**
 * Restores a pg_dump archive into the database at `url`, in one transaction (a failed restore leaves the
 * database as it was). The database must hold no tables (pg_restore creates them) unless `force`, which
 * drops the archive's objects first (pg_restore --clean).
 */
export async function pgRestore(
  url: string,
  file: string,
  force: boolean,
  environment: ToolEnvironment,
): Promise<void> {
  const path = tool('pg_restore')
  await checkVersions(path, url)
  const existing = await withClient(url, async (sql) => {
    const tables = await sql(
      `SELECT count(*)::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE c.relkind IN ('r', 'p') AND n.nspname NOT IN ('pg_catalog', 'information_schema')
          AND n.nspname NOT LIKE 'pg\\_%'`,
    )
    return { tables: Number(tables[0]?.[0] ?? 0), withRows: await tablesWithRows(sql) }
  })
  if (existing.tables > 0 && !force) {
    throw new BackupRefused(
      `DATABASE_URL: ${redactedUrl(url)} is not empty (${existing.tables} tables${existing.withRows.length ? `, rows in ${existing.withRows.slice(0, 5).join(', ')}` : ''}); restore into a new database (createdb NAME), or add --force to drop what the backup holds and replace it`,
    )
  }
  const { dbname, env } = connection(url)
  const clean = force && existing.tables > 0 ? ['--clean', '--if-exists'] : []
  const { code, stderr } = await run(
    [
      path,
      '--no-owner',
      '--no-privileges',
      '--exit-on-error',
      '--single-transaction',
      ...clean,
      `--dbname=${dbname}`,
      file,
    ],
    environment(env),
  )
  if (code !== 0) throw new Error(`pg_restore failed (exit ${code}), nothing was restored: ${stderr}`)
}
