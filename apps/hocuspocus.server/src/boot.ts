/**
 * Start-up shared by the entry points (main.ts, mcp-stdio.ts): configuration and server start, each
 * failure a message on stderr and an exit code (2: bad configuration, 1: could not start).
 */
import { type Config, ConfigError, loadConfig } from './config.ts'
import { DataDirBusyError } from './db/data-dir-lock.ts'
import { databaseTarget, prepareDatabase } from './db/pglite-thread.ts'
import type { Logger } from './logger.ts'
import type { RunningServer } from './server.ts'

/** A line for people on stderr (stdout belongs to the stdio transport). */
export const say = (line = '') => process.stderr.write(`${line}\n`)

export function loadConfigOrExit(): Config {
  try {
    return loadConfig()
  } catch (error) {
    if (error instanceof ConfigError) {
      say(error.message)
      process.exit(2)
    }
    throw error
  }
}

export async function startOrExit(config: Config): Promise<{ server: RunningServer; logger: Logger }> {
  // The database opens (PGlite compiles and starts on its own thread) while the server's modules load:
  // this file imports only the configuration and pglite-thread.ts, which starts the thread and the
  // compilation here; the logger, the database client (Prisma, the driver) and server.ts (and all it
  // imports, ~1 s of CPU) are imported after that.
  prepareDatabase(databaseTarget(config))
  const [{ createLogger }, { openServerDatabase }] = await Promise.all([
    import('./logger.ts'),
    import('./server-database.ts'),
  ])
  const logger = createLogger(config.logLevel)
  const database = openServerDatabase(config, logger)
  database.catch(() => {}) // its failure is met where startServer awaits it, below
  try {
    const { startServer } = await import('./server.ts')
    return { server: await startServer(config, logger, { database }), logger }
  } catch (error) {
    if (error instanceof DataDirBusyError) {
      say(error.message)
      process.exit(1)
    }
    logger.fatal({ err: error }, 'server failed to start')
    process.exit(1)
  }
}
