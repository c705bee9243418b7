/**
 * While a server holds an embedded database folder, CLI commands run inside that server: the CLI sends
 * its arguments over a Unix socket in the data folder (mode 0600, so only this machine's user reaches
 * it) and prints what comes back. The server runs the very same command code on its own connection.
 */
import { chmodSync, existsSync, unlinkSync } from 'node:fs'
import { join } from 'node:path'
import type { Logger } from '../logger.ts'
import type { Services } from '../services.ts'
import { type CommandRequest, runCommand } from './commands.ts'

export const adminSocketPath = (dataDir: string) => join(dataDir, 'admin.sock')

export type AdminChannel = { stop(): void }
export type CommandResponse = { exitCode: number; stdout: string; stderr: string }

export function startAdminChannel(deps: {
  dataDir: string
  services: Services
  logger: Logger
}): AdminChannel {
  const path = adminSocketPath(deps.dataDir)
  if (existsSync(path)) unlinkSync(path) // left by a server that did not stop cleanly; we hold the lock
  const server = Bun.serve({
    unix: path,
    async fetch(request) {
      if (request.method !== 'POST') return new Response('POST a command', { status: 405 })
      const body = (await request.json()) as CommandRequest
      let stdout = ''
      let stderr = ''
      const exitCode = await runCommand(body, deps.services, {
        out: (s) => {
          stdout += s
        },
        err: (s) => {
          stderr += s
        },
      })
      deps.logger.info({ command: body.argv.slice(0, 2).join(' '), exitCode }, 'admin command')
      return Response.json({ exitCode, stdout, stderr } satisfies CommandResponse)
    },
  })
  chmodSync(path, 0o600)
  return {
    stop() {
      server.stop(true)
      try {
        unlinkSync(path)
      } catch {}
    },
  }
}

/** Sends a command to the server holding the data folder. */
export async function sendToServer(dataDir: string, request: CommandRequest): Promise<CommandResponse> {
  const response = await fetch('http://localhost/run', {
    method: 'POST',
    body: JSON.stringify(request),
    headers: { 'content-type': 'application/json' },
    unix: adminSocketPath(dataDir),
  } as RequestInit)
  return (await response.json()) as CommandResponse
}
