/**
 * How a CLI command is declared (one group of them per file in this folder, listed in index.ts): its usage
 * line and summary for --help, its options and positionals for parseArgs, and `run`, a plain function over
 * the services, so it runs the same in the CLI process and inside a running server (admin-channel.ts).
 * Output goes through `io`; bad input is a UsageError: one line on stderr and exit code 2.
 */
import type { Result } from '@collab/doc-schema'
import type { Config } from '../../config.ts'
import type { Services } from '../../services.ts'

/** A command line to run, and the files it names (read by the calling process: see run.ts). */
export type CommandRequest = { argv: string[]; files?: Record<string, string> }

export type CommandIO = { out(text: string): void; err(text: string): void }

export const EXIT_OK = 0
export const EXIT_FAILURE = 1
export const EXIT_USAGE = 2

export type OptionSpec = Record<string, { type: 'string' | 'boolean' }>
export type Command = {
  usage: string
  summary: string
  options: OptionSpec
  positionals: string[]
  /**
   * The command's own rules on its options that need no database (a scope's spelling, a number's form),
   * checked with the usage errors before any database is opened: throws UsageError.
   */
  check?(opts: Record<string, string | boolean | undefined>): void
  run(ctx: {
    args: string[]
    opts: Record<string, string | boolean | undefined>
    services: Services
    io: CommandIO
    /** The contents of the files the command names (positionals called FILE), read by the calling process. */
    files: Record<string, string>
  }): Promise<number>
  /**
   * A command that opens the database itself (db copy, backup, restore: they must know whether a server
   * holds the folder, or must not open it at all): the CLI calls this instead of opening the database and
   * instead of handing the command to a running server; `run` then answers only a request that reached a
   * server's admin socket some other way.
   */
  runAlone?(ctx: {
    args: string[]
    opts: Record<string, string | boolean | undefined>
    config: Config
    io: CommandIO
  }): Promise<number>
}

/**
 * People's sign-in data (auth/accounts.ts), imported when a command uses it: the command list is read by
 * every CLI start, and most commands never need it.
 */
export async function accountsOf(services: Services) {
  const { createAccountsService } = await import('../../auth/accounts.ts')
  return createAccountsService(services.db.prisma)
}

/** Bad input: its message is printed alone and the exit code is EXIT_USAGE. */
export class UsageError extends Error {}

/** A service's value, or its refusal thrown: bad input as a UsageError, anything else as a failure. */
export function unwrap<T>(result: Result<T>): T {
  if (result.kind === 'error') {
    throw result.code === 'invalid_input' || result.code === 'not_found' || result.code === 'conflict'
      ? new UsageError(result.message)
      : new Error(result.message)
  }
  return result.value
}

/** Rows as aligned columns (the first row is the header); the last column is not padded. */
export const table = (rows: string[][]): string => {
  if (rows.length === 0) return ''
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)))
  return `${rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ')).join('\n')}\n`
}

/** A time as ISO 8601 to the second, or "-". */
export const when = (d: Date | null) => (d ? d.toISOString().replace(/\.\d+Z$/, 'Z') : '-')
