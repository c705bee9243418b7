/**
 * Entry point: config -> database -> Hocuspocus -> HTTP -> listen; SIGINT/SIGTERM store everything
 * pending before exit. Human-readable lines and JSON logs both go to stderr.
 */
import { existsSync } from 'node:fs'
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
const base = config.publicUrl ?? server.url
const tokenFile = join(config.dataDir, TOKEN_FILE_NAME)
say()
say(`Collaboration server listening on ${server.url} (database: ${server.services.db.kind})`)
say(`  Editors (WebSocket): ${base.replace(/^http/, 'ws')}`)
say(`  MCP endpoint:        ${base}/mcp`)
say(`  Health / metrics:    ${base}/health  ${base}/metrics`)
if (created) {
  say()
  say(`First run: created user "${created.handle}" and a read+write API token, saved to:`)
  say(`  ${created.tokenFile}   (read it with: cat ${created.tokenFile})`)
} else if (existsSync(tokenFile)) {
  say(`  First-run token:     ${tokenFile}`)
}
say()

let shuttingDown = false
async function shutdown(signal: string) {
  if (shuttingDown) return
  shuttingDown = true
  logger.info({ signal }, 'shutting down: storing pending changes')
  const { unstored } = await server.stop()
  process.exit(unstored.length ? 1 : 0)
}
process.on('SIGINT', () => void shutdown('SIGINT'))
process.on('SIGTERM', () => void shutdown('SIGTERM'))
