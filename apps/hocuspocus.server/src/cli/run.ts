/**
 * A CLI command line, parsed and run: finding the command (commands/index.ts), --help, usage errors, the
 * files and --out a command names (read and written by the calling process), and the exit code. Runs the
 * same in the CLI process and inside a running server (admin-channel.ts).
 */

import { parseArgs } from 'node:util'
import type { Services } from '../services.ts'
import type { CommandRequest } from './commands/command.ts'
import {
  type Command,
  type CommandIO,
  EXIT_FAILURE,
  EXIT_OK,
  EXIT_USAGE,
  UsageError,
} from './commands/command.ts'
import { commands } from './commands/index.ts'

/** argv after `cli --`; files holds the contents of files the command names, read by the calling process. */
/** A command line to run, and the files it names (read by the calling process). */
export type { CommandRequest }

export function helpText(): string {
  const lines = Object.values(commands).map((c) => `  ${c.usage.padEnd(82)} ${c.summary}`)
  return `usage: bun run cli -- COMMAND [options]   (every command takes --help)\n\ncommands:\n${lines.join('\n')}\n\nData: DATA_DIR (embedded, default ./.data) or DATABASE_URL (PostgreSQL), as for the server.\n`
}

/** The command named by argv, so the caller can tell which files it needs before running it. */
export function findCommand(argv: string[]): { key: string; rest: string[] } | null {
  const key = argv.slice(0, 2).join(' ')
  return commands[key] ? { key, rest: argv.slice(2) } : null
}

/** The file a command's output goes to (its --out option), written by the calling process; null for stdout. */
export function outputNamed(argv: string[]): string | null {
  const found = findCommand(argv)
  if (!found || !('out' in commands[found.key]!.options)) return null
  try {
    const { values } = parseArgs({
      args: found.rest,
      options: commands[found.key]!.options,
      allowPositionals: true,
      strict: true,
    })
    return typeof values.out === 'string' ? values.out : null
  } catch {
    return null // runCommand reports the usage error
  }
}

/**
 * Paths of the files a command names (its positionals called FILE), parsed with the command's own options
 * so an option value is never taken for a file. The calling process reads them (see CommandRequest).
 */
export function filesNamed(argv: string[]): string[] {
  const found = findCommand(argv)
  if (!found || found.rest.includes('--help') || found.rest.includes('-h')) return []
  const command = commands[found.key]!
  try {
    const { positionals } = parseArgs({
      args: found.rest,
      options: command.options,
      allowPositionals: true,
      strict: true,
    })
    return command.positionals.flatMap((name, i) =>
      name === 'FILE' && positionals[i] ? [positionals[i]] : [],
    )
  } catch {
    return [] // runCommand reports the usage error
  }
}

type Prepared =
  | { kind: 'answered'; exitCode: number }
  | {
      kind: 'ready'
      key: string
      command: Command
      args: string[]
      opts: Record<string, string | boolean | undefined>
    }

/**
 * Everything about a command line that needs no database: an unknown command, `--help`, unknown options
 * and missing or extra arguments are answered here, so the CLI answers them at once (without opening the
 * database, and also while it is unavailable). `ready` carries the parsed arguments for runCommand.
 */
export function prepareCommand(argv: string[], io: CommandIO): Prepared {
  const found = findCommand(argv)
  if (!found) {
    io.err(`${argv.slice(0, 2).join(' ') || 'command'}: unknown command\n\n${helpText()}`)
    return { kind: 'answered', exitCode: EXIT_USAGE }
  }
  const command = commands[found.key]!
  if (found.rest.includes('--help') || found.rest.includes('-h')) {
    io.out(`usage: bun run cli -- ${command.usage}\n\n${command.summary}\n`)
    return { kind: 'answered', exitCode: EXIT_OK }
  }
  let parsed: ReturnType<typeof parseArgs>
  try {
    parsed = parseArgs({ args: found.rest, options: command.options, allowPositionals: true, strict: true })
  } catch (error) {
    io.err(`${(error as Error).message.split('\n')[0]} (usage: ${command.usage})\n`)
    return { kind: 'answered', exitCode: EXIT_USAGE }
  }
  if (parsed.positionals.length !== command.positionals.length) {
    const missing = command.positionals.slice(parsed.positionals.length)
    io.err(
      missing.length
        ? `${missing.join(' ')}: missing (usage: ${command.usage})\n`
        : `unexpected argument "${parsed.positionals[command.positionals.length]}" (usage: ${command.usage})\n`,
    )
    return { kind: 'answered', exitCode: EXIT_USAGE }
  }
  const opts = parsed.values as Record<string, string | boolean | undefined>
  try {
    command.check?.(opts)
  } catch (error) {
    if (!(error instanceof UsageError)) throw error
    io.err(`${error.message}\n`)
    return { kind: 'answered', exitCode: EXIT_USAGE }
  }
  return {
    kind: 'ready',
    key: found.key,
    command,
    args: parsed.positionals,
    opts,
  }
}

export async function runCommand(
  request: CommandRequest,
  services: Services,
  io: CommandIO,
): Promise<number> {
  const prepared = prepareCommand(request.argv, io)
  if (prepared.kind === 'answered') return prepared.exitCode
  try {
    return await prepared.command.run({
      args: prepared.args,
      opts: prepared.opts,
      services,
      io,
      files: request.files ?? {},
    })
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`${error.message}\n`)
      return EXIT_USAGE
    }
    io.err(`${prepared.key}: failed: ${(error as Error).message}\n`)
    return EXIT_FAILURE
  }
}
