/**
 * The CLI's side of the admin socket (admin-channel.ts is the server's): a command sent to the server that
 * holds the data folder, and its answer. Imports nothing of the commands, so a command may use it.
 */
import { join } from 'node:path'
import { type CommandRequest, EXIT_FAILURE } from './commands/command.ts'

/** The admin socket of the server holding `dataDir`. */
export const adminSocketPath = (dataDir: string) => join(dataDir, 'admin.sock')

/** What a command run through the socket answers. */
export type CommandResponse = { exitCode: number; stdout: string; stderr: string }

/** Sends a command to the server holding the data folder. */
export async function sendToServer(dataDir: string, request: CommandRequest): Promise<CommandResponse> {
  const response = await fetch('http://localhost/run', {
    method: 'POST',
    body: JSON.stringify(request),
    headers: { 'content-type': 'application/json' },
    unix: adminSocketPath(dataDir),
  } as RequestInit)
  const text = await response.text()
  try {
    const body = JSON.parse(text) as Partial<CommandResponse>
    if (
      typeof body.exitCode === 'number' &&
      typeof body.stdout === 'string' &&
      typeof body.stderr === 'string'
    )
      return { exitCode: body.exitCode, stdout: body.stdout, stderr: body.stderr }
  } catch {}
  return {
    exitCode: EXIT_FAILURE,
    stdout: '',
    stderr: `admin socket: the server answered ${response.status} without a command result; its log says why\n`,
  }
}
