/**
 * `bun run cli -- COMMAND …`. Uses the same DATA_DIR / DATABASE_URL as the server. With an embedded
 * database held by a running server, the command runs inside that server (admin channel); otherwise
 * this process opens the database itself.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { ConfigError, loadConfig } from '../config.ts'
import {
  acquireDataDirLock,
  DataDirBusyError,
  type DataDirLock,
  readLockHolder,
} from '../db/data-dir-lock.ts'
import { databaseTarget, prepareDatabase } from '../db/pglite-thread.ts'
import { sendToServer } from './admin-client.ts'
import { type CommandIO, EXIT_USAGE } from './commands/command.ts'
import { type CommandRequest, filesNamed, helpText, outputNamed, prepareCommand, runCommand } from './run.ts'
import { escapeControls, escapedNote } from './terminal-text.ts'

// On a terminal, control characters in what is printed are escaped (terminal-text.ts); in files and pipes not.
const stdio: CommandIO = {
  out: (s) => process.stdout.write(s),
  err: (s) => process.stderr.write(process.stderr.isTTY ? escapeControls(s).text : s),
}

async function main(argv: string[], io: CommandIO): Promise<number> {
  if (argv.length === 0 || argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help') {
    io.out(helpText())
    return argv.length === 0 ? EXIT_USAGE : 0
  }
  // Help and usage errors need no database: answered before one is opened (at once, and also while the
  // database is unavailable or held by a server).
  const prepared = prepareCommand(argv, io)
  if (prepared.kind === 'answered') return prepared.exitCode
  let config: ReturnType<typeof loadConfig>
  try {
    config = loadConfig()
  } catch (error) {
    if (error instanceof ConfigError) {
      io.err(`${error.message}\n`)
      return EXIT_USAGE
    }
    throw error
  }
  if (prepared.command.runAlone) {
    return prepared.command.runAlone({ args: prepared.args, opts: prepared.opts, config, io })
  }
  const request: CommandRequest = { argv, files: {} }
  for (const file of filesNamed(argv)) {
    try {
      request.files = { ...request.files, [file]: readFileSync(file, 'utf8') }
    } catch (error) {
      io.err(
        `FILE: cannot read "${file}": ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}\n`,
      )
      return EXIT_USAGE
    }
  }

  const target = databaseTarget(config)
  let lock: DataDirLock | undefined
  if (target.kind === 'pglite') {
    const holder = readLockHolder(config.dataDir)
    if (holder?.role === 'server') {
      const answer = await sendToServer(config.dataDir, request)
      io.out(answer.stdout)
      io.err(answer.stderr)
      return answer.exitCode
    }
    try {
      lock = acquireDataDirLock(config.dataDir, 'cli', { onTakeover: (message) => io.err(`${message}\n`) })
    } catch (error) {
      if (error instanceof DataDirBusyError) {
        io.err(`${error.message}\n`)
        return 1
      }
      throw error
    }
  }
  // The embedded database's thread and WebAssembly start now, while this process imports what a command
  // runs on (the database client, the services: ~1 s of CPU), which it needs only from here on; the
  // command list (run.ts) imports each command's own machinery when that command runs.
  prepareDatabase(target)
  const [{ openDatabase }, { createServices }, { bridgeAccessChanges }, { applyMigrations }] =
    await Promise.all([
      import('../db/client.ts'),
      import('../services.ts'),
      import('../access-changes.ts'),
      import('../db/migrations.ts'),
    ])
  const db = await openDatabase(target)
  const services = createServices(db)
  // Servers on this database hear a revoke, share or flag change at once through Redis (see access-changes.ts).
  const bridge = config.redisUrl
    ? await bridgeAccessChanges({
        redisUrl: config.redisUrl,
        changes: services.accessChanges,
        subscribe: false,
        onError: (message) =>
          io.err(`REDIS_URL: ${message}; running servers apply the change within 10 s instead\n`),
      })
    : undefined
  try {
    if (config.migrateOnStart && prepared.key !== 'db status' && prepared.key !== 'db migrate') {
      await applyMigrations(db.adapterFactory, { onWarning: (m) => io.err(`${m}\n`) })
    }
    return await runCommand(request, services, io)
  } finally {
    await bridge?.close()
    services.documents.close()
    await db.close()
    lock?.release()
  }
}

/** Waits for a stream to take everything written so far (pipes can be asynchronous). */
const drained = (stream: NodeJS.WriteStream) =>
  new Promise<void>((resolve) => stream.write('', () => resolve()))

const args = process.argv.slice(2)
const argv = args[0] === '--' ? args.slice(1) : args
// A command's --out FILE is written here, by the calling process, whether the command ran here or in a server.
const outFile = outputNamed(argv)
const output: string[] = []
// stdout is written once at the end with Bun.write, which waits until a pipe took all of it (a large export).
let code = await main(argv, { out: (s) => output.push(s), err: stdio.err })
if (!outFile && process.stdout.isTTY) {
  const shown = escapeControls(output.join(''))
  await Bun.write(Bun.stdout, shown.text)
  if (shown.escaped > 0) stdio.err(escapedNote(shown.escaped))
} else if (!outFile) await Bun.write(Bun.stdout, output.join(''))
else if (code === 0) {
  try {
    writeFileSync(outFile, output.join(''))
  } catch (error) {
    stdio.err(
      `--out: cannot write "${outFile}": ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}\n`,
    )
    code = 1
  }
}
await Promise.all([drained(process.stdout), drained(process.stderr)])
// The migration engine can leave handles open for seconds; a CLI command is done when its work is.
process.exit(code)
