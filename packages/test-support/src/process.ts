/** Real processes: the CLI and the server entry point, as a person would run them. */
import { realpathSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import type { Subprocess } from 'bun'
import { TEST_DATA_ROOT } from './data-root.ts'

/** The server app's folder (apps/hocuspocus.server), found as a dependency of this package. */
export const APP_DIR = realpathSync(
  dirname(Bun.resolveSync('@collab/hocuspocus.server/package.json', import.meta.dir)),
)
export const REPO_DIR = resolve(APP_DIR, '../..')

export type Run = { exitCode: number; stdout: string; stderr: string }

export async function runCli(args: string[], env: Record<string, string | undefined>): Promise<Run> {
  const proc = Bun.spawn(['bun', join(APP_DIR, 'src/cli/main.ts'), ...args], {
    cwd: REPO_DIR,
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [stdout, stderr, exitCode] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ])
  return { exitCode, stdout, stderr }
}

/** Where servers started by tests keep templates of new database folders (PGLITE_TEMPLATES). */
export const SERVER_TEMPLATES = join(TEST_DATA_ROOT, 'collab-server-templates')

export type ServerProcess = { proc: Subprocess<'ignore', 'pipe', 'pipe'>; url: string; stderr: () => string }

/**
 * Starts `src/main.ts` and resolves once it prints where it listens. SIGTERM stops it without a drain
 * (DRAIN_GRACE_MS 0: no balancer is waiting to take it out) unless `env` sets one. `wrap`: a command the
 * server runs under (strace and its arguments; it must print nothing on stderr): `proc` is then the
 * wrapper, and the server is its child (strace does not pass SIGTERM on: signal the child).
 */
export async function spawnServer(
  env: Record<string, string | undefined>,
  options: { wrap?: string[]; startTimeoutMs?: number } = {},
): Promise<ServerProcess> {
  const proc = Bun.spawn([...(options.wrap ?? []), 'bun', join(APP_DIR, 'src/main.ts')], {
    cwd: REPO_DIR,
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'info',
      DRAIN_GRACE_MS: '0',
      // New folders' templates (db/pglite-template.ts) in the tests' own folder, never the user's cache.
      PGLITE_TEMPLATES: SERVER_TEMPLATES,
      ...env,
    },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  })
  let text = ''
  const reader = proc.stderr.getReader()
  const decoder = new TextDecoder()
  const url = await new Promise<string>((resolveUrl, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`server did not start:\n${text}`)),
      options.startTimeoutMs ?? 45_000,
    )
    void (async () => {
      for (;;) {
        const { value, done } = await reader.read()
        if (done) break
        text += decoder.decode(value)
        const match = /listening on (http:\/\/\S+)/.exec(text)
        if (match) {
          clearTimeout(timer)
          resolveUrl(match[1]!)
        }
      }
      clearTimeout(timer)
      reject(new Error(`server exited before listening:\n${text}`))
    })()
  })
  return { proc, url, stderr: () => text }
}
