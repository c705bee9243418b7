/**
 * Entry point: config -> database -> Hocuspocus -> HTTP -> listen; SIGTERM drains (DRAIN_GRACE_MS), then
 * SIGINT/SIGTERM store everything pending before exit. Human-readable lines and JSON logs both go to stderr.
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { loadConfigOrExit, say, startOrExit } from './boot.ts'
import { firstRun, TOKEN_FILE_NAME } from './first-run.ts'

const config = loadConfigOrExit()
const { server, logger } = await startOrExit(config)

const created = await firstRun(server.services, config.dataDir)
const base = config.publicUrl ?? server.url
const tokenFile = join(config.dataDir, TOKEN_FILE_NAME)
say()
say(`Collaboration server listening on ${server.url} (database: ${server.services.db.kind})`)
say(`  Editors (WebSocket): ${base.replace(/^http/, 'ws')}`)
say(`  MCP endpoint:        ${base}/mcp`)
say(`  Health / metrics:    ${base}/health/ready  ${base}/health/live  ${base}/metrics`)
if (server.auth.enabled()) {
  say(`  Web editor (people): ${base}/   (sign-in: ${base}/sign-in, OAuth for MCP apps: ${base}/auth)`)
} else {
  say(`  Sign-in and OAuth are off: they need an https PUBLIC_URL (or a loopback address)`)
}
if (created) {
  say()
  say(`First run: created user "${created.handle}" and a read+write API token, saved to:`)
  say(`  ${created.tokenFile}   (read it with: cat ${created.tokenFile})`)
  if (server.auth.enabled()) {
    // The person who started the server is the one who will sign in: give them the way in now. The
    // link is single-use and expires; it is printed once, here, never logged.
    const invite = await server.auth.accounts.createInvite(created.userId)
    say(`Open this link to choose a password for "${created.handle}", then edit at ${base}/ :`)
    say(`  ${base}/invite/${invite.token}`)
    say(`  (single use; a new one: bun run cli -- user invite ${created.handle})`)
  } else {
    say(`To sign in as "${created.handle}" (and connect OAuth apps), choose a password with the link from:`)
    say(`  bun run cli -- user invite ${created.handle}`)
  }
} else if (existsSync(tokenFile)) {
  say(`  First-run token:     ${tokenFile}`)
}
say()

let shuttingDown = false
let drainSkip: (() => void) | undefined
/**
 * SIGTERM (a service manager, a rolling restart) drains first: DRAIN_GRACE_MS not ready while still
 * serving, so the balancer takes this instance out; then the stop hands the editors over (their providers
 * reconnect through the balancer) and stores everything. SIGINT (a person at the terminal) and a second
 * signal during the drain stop at once.
 */
async function shutdown(signal: string) {
  if (shuttingDown) {
    drainSkip?.()
    return
  }
  shuttingDown = true
  const grace = signal === 'SIGTERM' ? (config.drainGraceMs ?? 0) : 0
  if (grace > 0) {
    const drain = server.drain(grace)
    drainSkip = drain.skip
    await drain.done
  }
  logger.info({ signal }, 'shutting down: storing pending changes')
  const { unstored } = await server.stop()
  process.exit(unstored.length ? 1 : 0)
}
process.on('SIGINT', () => void shutdown('SIGINT'))
process.on('SIGTERM', () => void shutdown('SIGTERM'))
