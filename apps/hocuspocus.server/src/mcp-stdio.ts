/**
 * stdio entry (`bun run mcp:stdio`): runs the whole server in this process (editors still connect on
 * PORT) and speaks MCP on stdin/stdout as the user of MCP_TOKEN. stdout carries only MCP messages:
 * every log and message goes to stderr, and the startup banner of main.ts is not printed here.
 * The session ends when stdin closes (the host quit) or on SIGINT/SIGTERM; pending changes are stored first.
 */
import { join } from 'node:path'
import { ConfigError, loadConfig } from './config.ts'
import { DataDirBusyError } from './db/data-dir-lock.ts'
import { firstRun, TOKEN_FILE_NAME } from './first-run.ts'
import { createLogger } from './logger.ts'
import { startServer } from './server.ts'

const say = (line = '') => process.stderr.write(`${line}\n`)

let config: ReturnType<typeof loadConfig>
try {
  config = loadConfig()
} catch (error) {
  if (error instanceof ConfigError) {
    say(error.message)
    process.exit(2)
  }
  throw error
}
const token = config.mcpToken
if (!token) {
  say(
    'MCP_TOKEN: required for the stdio entry. Set it to an API token (bun run cli -- token issue HANDLE), ' +
      `or use the first-run token in ${join(config.dataDir, TOKEN_FILE_NAME)}.`,
  )
  process.exit(2)
}
const logger = createLogger(config.logLevel)

let server: Awaited<ReturnType<typeof startServer>>
try {
  server = await startServer(config, logger)
} catch (error) {
  if (error instanceof DataDirBusyError) {
    say(error.message)
    process.exit(1)
  }
  logger.fatal({ err: error }, 'server failed to start')
  process.exit(1)
}

const created = await firstRun(server.services, config.dataDir)
const principal = await server.services.tokens.verify(token)
if (!principal) {
  say(
    'MCP_TOKEN: not a valid API token (unknown, revoked or expired). Issue one with ' +
      '`bun run cli -- token issue HANDLE`' +
      (created ? `, or use the first-run token just saved to ${created.tokenFile}.` : '.'),
  )
  await server.stop()
  process.exit(2)
}

let shuttingDown = false
async function shutdown(reason: string) {
  if (shuttingDown) return
  shuttingDown = true
  logger.info({ reason }, 'shutting down: storing pending changes')
  const { unstored } = await server.stop()
  process.exit(unstored.length ? 1 : 0)
}
process.on('SIGINT', () => void shutdown('SIGINT'))
process.on('SIGTERM', () => void shutdown('SIGTERM'))
process.stdin.on('end', () => void shutdown('stdin closed'))
process.stdin.on('close', () => void shutdown('stdin closed'))

await server.mcp.connectStdio(principal)
logger.info(
  { userId: principal.user.id, scopes: principal.scopes, url: server.url },
  'MCP over stdio ready (editors connect on the port)',
)
