/**
 * The CLI while a server runs on the same data: with the embedded database the command is handed to the
 * server through its admin socket (the folder is never opened twice); with PostgreSQL it connects itself.
 * Either way the running server sees the result at once. The server is the process's shared one
 * (`useSharedCliServer`): the admin socket is every server's, and this file's users are its own.
 */
import { describe, expect, test } from 'bun:test'
import { existsSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { useSharedCliServer } from '@collab/test-support/cli'
import { DATABASE_KIND } from '@collab/test-support/database'
import { REPO_DIR } from '@collab/test-support/process'
import { MAX_ADMIN_ARG_CHARS, MAX_ADMIN_ARGS, MAX_ADMIN_REQUEST_BYTES } from '../cli/admin-channel.ts'

describe(`CLI while the server runs (${DATABASE_KIND})`, () => {
  const run = useSharedCliServer()
  const { cli } = run

  test('a user and token made by the CLI work against the running server', async () => {
    const walt = run.share.handle('walt')
    expect((await cli('user', 'add', walt)).exitCode).toBe(0)
    const issued = await cli('token', 'issue', walt)
    expect(issued.exitCode).toBe(0)
    const res = await fetch(`${run.share.server.url}/api/documents`, {
      headers: { Authorization: `Bearer ${issued.stdout.trim()}` },
    })
    expect(res.status).toBe(200)
    const bad = await cli('user', 'add', walt)
    expect(bad.exitCode).toBe(2) // errors keep their exit code through the admin channel
    expect(bad.stderr).toContain('already exists')
  })

  /** POSTs raw bytes to the admin socket, as any local process of this user could. */
  async function adminPost(body: string | Uint8Array, method = 'POST') {
    const res = await fetch('http://localhost/run', {
      method,
      body: method === 'POST' ? body : undefined,
      unix: join(run.share.database.dataDir, 'admin.sock'),
    } as RequestInit)
    return { status: res.status, type: res.headers.get('content-type') ?? '', text: await res.text() }
  }

  test.skipIf(DATABASE_KIND !== 'pglite')(
    'a malformed admin request gets a one-line JSON refusal, never a debug page with paths and a stack',
    async () => {
      const cases: Array<[string | Uint8Array, string, number, string]> = [
        ['not json {', 'POST', 400, 'body: not JSON'],
        ['{"argv": "user list"}', 'POST', 400, 'argv: '],
        ['{"argv": [1, 2]}', 'POST', 400, 'argv.0: '],
        [JSON.stringify({ argv: Array(MAX_ADMIN_ARGS + 1).fill('x') }), 'POST', 400, 'argv: '],
        [JSON.stringify({ argv: ['user', 'x'.repeat(MAX_ADMIN_ARG_CHARS + 1)] }), 'POST', 400, 'argv.1: '],
        ['{"argv": ["user", "list"], "extra": 1}', 'POST', 400, 'body: '],
        ['null', 'POST', 400, 'body: '],
        ['', 'GET', 405, 'method: GET'],
        [new Uint8Array(MAX_ADMIN_REQUEST_BYTES + 1), 'POST', 413, 'body: larger than'],
      ]
      for (const [body, method, status, start] of cases) {
        const answer = await adminPost(body, method)
        expect({ status: answer.status, type: answer.type }).toEqual({
          status,
          type: expect.stringContaining('application/json'),
        })
        const parsed = JSON.parse(answer.text) as { exitCode: number; stdout: string; stderr: string }
        expect(parsed.exitCode).toBe(2)
        expect(parsed.stdout).toBe('')
        expect(parsed.stderr).toStartWith(start)
        expect(parsed.stderr.trimEnd().split('\n')).toHaveLength(1)
        expect(answer.text).not.toContain(REPO_DIR) // no working directory, source path or stack
        expect(answer.text.toLowerCase()).not.toMatch(/<html|<!doctype|\bat .*:\d+:\d+/) // no page, no stack
      }
      // The server is unharmed and the CLI still runs commands through the socket.
      const listed = await cli('user', 'list')
      expect(listed.exitCode).toBe(0)
      expect((await fetch(`${run.share.server.url}/health`)).status).toBe(200)
    },
    60_000,
  )

  test.skipIf(DATABASE_KIND !== 'pglite')('the admin socket is private to this machine user', () => {
    const socket = join(run.share.database.dataDir, 'admin.sock')
    expect(existsSync(socket)).toBe(true)
    expect(statSync(socket).mode & 0o077).toBe(0)
  })
})
