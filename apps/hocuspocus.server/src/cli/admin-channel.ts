/**
 * While a server holds an embedded database folder, CLI commands run inside that server: the CLI sends
 * its arguments over a Unix socket in the data folder (mode 0600, so only this machine's user reaches
 * it) and prints what comes back. The server runs the very same command code on its own connection.
 * The request is checked (zod, bounded sizes) before anything runs, and every answer, a refusal or a
 * failure too, is a CommandResponse in JSON: never Bun's debug page with paths, source and stack.
 */
import { chmodSync, existsSync, unlinkSync } from 'node:fs'
import { MAX_IMPORT_BYTES } from '@collab/doc-schema'
import { z } from 'zod'
import type { Logger } from '../logger.ts'
import type { Services } from '../services.ts'
import { adminSocketPath, type CommandResponse } from './admin-client.ts'
import { EXIT_FAILURE, EXIT_USAGE } from './commands/command.ts'
import { type CommandRequest, runCommand } from './run.ts'

export type AdminChannel = { stop(): void }

/** Arguments in one request: far more than any command takes. */
export const MAX_ADMIN_ARGS = 64
/** Characters in one argument or file name. */
export const MAX_ADMIN_ARG_CHARS = 4_096
/** Files one request carries (the CLI reads them for the server; doc import takes one). */
export const MAX_ADMIN_FILES = 4
/**
 * Bytes of one request body, files included: room for a Markdown file at the import limit (MAX_IMPORT_BYTES)
 * once JSON has escaped it (quotes, backslashes and newlines take two bytes each, so at most twice its size).
 */
export const MAX_ADMIN_REQUEST_BYTES = 2 * MAX_IMPORT_BYTES + 1024 * 1024

const USAGE = 'send {"argv": ["user", "list"]} as JSON, as `bun run cli` does'

const requestSchema = z
  .object(
    {
      argv: z
        .array(
          z
            .string({ error: 'expected a string' })
            .max(MAX_ADMIN_ARG_CHARS, `at most ${MAX_ADMIN_ARG_CHARS} characters`),
          { error: 'expected an array of strings' },
        )
        .max(MAX_ADMIN_ARGS, `at most ${MAX_ADMIN_ARGS} arguments`),
      files: z
        .record(
          z.string().max(MAX_ADMIN_ARG_CHARS, `file names of at most ${MAX_ADMIN_ARG_CHARS} characters`),
          z.string({ error: 'expected file contents as a string' }),
          { error: 'expected an object of file name to contents' },
        )
        .refine((files) => Object.keys(files).length <= MAX_ADMIN_FILES, {
          message: `at most ${MAX_ADMIN_FILES} files`,
        })
        .optional(),
    },
    { error: 'expected an object' },
  )
  .strict()

/** Every answer, refusals and failures included, is a CommandResponse as JSON: never a framework's page. */
function answer(status: number, exitCode: number, stderr: string, stdout = ''): Response {
  return Response.json({ exitCode, stdout, stderr } satisfies CommandResponse, { status })
}
const refuse = (status: number, message: string) => answer(status, EXIT_USAGE, `${message}\n`)
const FAILED = 'admin: the command failed inside the server; its log says why\n'

/** The body as text, or null past MAX_ADMIN_REQUEST_BYTES (read no further than that). */
async function boundedText(request: Request): Promise<string | null> {
  if (Number(request.headers.get('content-length') ?? 0) > MAX_ADMIN_REQUEST_BYTES) return null
  if (!request.body) return ''
  const chunks: Uint8Array[] = []
  let size = 0
  const reader = request.body.getReader()
  for (;;) {
    const { value, done } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > MAX_ADMIN_REQUEST_BYTES) {
      await reader.cancel().catch(() => {})
      return null
    }
    chunks.push(value)
  }
  return Buffer.concat(chunks).toString('utf8')
}

/** The first problem zod found, as "field: what is wrong". */
function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0]
  const field = issue?.path.length ? issue.path.map(String).join('.') : 'body'
  return `${field}: ${issue?.message ?? 'invalid'}`
}

export function startAdminChannel(deps: {
  dataDir: string
  services: Services
  logger: Logger
}): AdminChannel {
  const path = adminSocketPath(deps.dataDir)
  if (existsSync(path)) unlinkSync(path) // left by a server that did not stop cleanly; we hold the lock

  async function handle(request: Request): Promise<Response> {
    if (request.method !== 'POST') return refuse(405, `method: ${request.method} is not accepted; ${USAGE}`)
    const text = await boundedText(request)
    if (text === null) return refuse(413, `body: larger than ${MAX_ADMIN_REQUEST_BYTES} bytes; ${USAGE}`)
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch {
      return refuse(400, `body: not JSON; ${USAGE}`)
    }
    const parsed = requestSchema.safeParse(json)
    if (!parsed.success) return refuse(400, `${firstIssue(parsed.error)}; ${USAGE}`)
    const body: CommandRequest = parsed.data
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
    return answer(200, exitCode, stderr, stdout)
  }

  const failed = (error: unknown) => {
    deps.logger.error({ err: error }, 'admin command failed')
    return answer(500, EXIT_FAILURE, FAILED)
  }
  const server = Bun.serve({
    unix: path,
    // Bounded by boundedText, which answers in our format; Bun's own limit would answer in its own.
    maxRequestBodySize: Number.MAX_SAFE_INTEGER,
    development: false,
    async fetch(request) {
      try {
        return await handle(request)
      } catch (error) {
        return failed(error)
      }
    },
    error: failed,
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
