/**
 * stdio entry (`bun run mcp:stdio`): runs the whole server in this process (editors still connect on
 * PORT) and speaks MCP on stdin/stdout as the user of MCP_TOKEN. stdout carries only MCP messages:
 * every log and message goes to stderr, and the startup banner of main.ts is not printed here.
 * The session ends when stdin closes (the host quit) or on SIGINT/SIGTERM; pending changes are stored first.
 */
import { join } from 'node:path'
import { loadConfigOrExit, say, startOrExit } from './boot.ts'
import { firstRun, TOKEN_FILE_NAME } from './first-run.ts'

const config = loadConfigOrExit()
const token = config.mcpToken
if (!token) {
  say(
    'MCP_TOKEN: required for the stdio entry. Set it to an API token (bun run cli -- token issue HANDLE), ' +
      `or use the first-run token in ${join(config.dataDir, TOKEN_FILE_NAME)}.`,
  )
  process.exit(2)
}

const { server, logger } = await startOrExit(config)

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
