/**
 * The CLI as people run it: real processes, real database, exit codes and output streams. Users, tokens,
 * help and the database's commands here; the documents' commands in cli-documents.test.ts (two files, so
 * their processes run beside each other). No server runs here: each command opens the database itself,
 * as when the operator's server is down (~3 s of CPU a command on PGlite); cli-documents.test.ts hands its
 * commands to a server.
 */
import { describe, expect, test } from 'bun:test'
import { useCliDatabase } from '@collab/test-support/cli'
import { addUsers, DATABASE_KIND } from '@collab/test-support/database'
import { runCli } from '@collab/test-support/process'

describe(`CLI (${DATABASE_KIND})`, () => {
  // The users the token tests start from (`user add` itself is the first test's).
  const run = useCliDatabase({ prepare: (services) => addUsers(services, ['bert', 'cleo']) })
  const { cli } = run

  test('user add creates a user; a duplicate or bad handle is one line on stderr and exit 2', async () => {
    const added = await cli('user', 'add', 'ada', '--name', 'Ada Lovelace')
    expect(added).toMatchObject({ exitCode: 0, stdout: 'ada\n' })
    const dup = await cli('user', 'add', 'ada')
    expect(dup.exitCode).toBe(2)
    expect(dup.stderr.trim().split('\n')).toHaveLength(1)
    expect(dup.stderr).toContain('already exists')
    const bad = await cli('user', 'add', 'Not A Handle!')
    expect(bad.exitCode).toBe(2)
    expect(bad.stderr).toStartWith('HANDLE:')
    const list = await cli('user', 'list')
    expect(list.stdout).toContain('ada')
    expect(list.stdout).toContain('Ada Lovelace')
  })

  test('token issue prints the token and nothing else on stdout; list and revoke manage it', async () => {
    const issued = await cli(
      'token',
      'issue',
      'bert',
      '--scope',
      'read',
      '--label',
      'laptop',
      '--expires-days',
      '30',
    )
    expect(issued.exitCode).toBe(0)
    expect(issued.stdout).toMatch(/^ctk_[0-9a-f]{12}_[A-Za-z0-9_-]{43}\n$/)
    const id = /^ctk_([0-9a-f]{12})_/.exec(issued.stdout)![1]!
    const list = await cli('token', 'list', 'bert')
    expect(list.stdout).toContain(id)
    expect(list.stdout).toContain('laptop')
    expect(list.stdout).toMatch(new RegExp(`${id}\\s+read\\s+active`))
    expect(list.stdout).not.toContain(issued.stdout.trim()) // the secret is never shown again
    expect((await cli('token', 'revoke', id)).exitCode).toBe(0)
    expect((await cli('token', 'list', 'bert')).stdout).toMatch(new RegExp(`${id}\\s+read\\s+revoked`))
  })

  test('token errors name the option and exit 2', async () => {
    const scope = await cli('token', 'issue', 'cleo', '--scope', 'admin')
    expect(scope.exitCode).toBe(2)
    expect(scope.stderr).toStartWith('--scope:')
    const days = await cli('token', 'issue', 'cleo', '--expires-days', 'soon')
    expect(days.exitCode).toBe(2)
    expect(days.stderr).toStartWith('--expires-days:')
    const who = await cli('token', 'issue', 'nobody-here')
    expect(who.exitCode).toBe(2)
    expect(who.stderr).toStartWith('HANDLE:')
    const unknownOption = await cli('token', 'issue', 'cleo', '--colour', 'red')
    expect(unknownOption.exitCode).toBe(2)
    const revoke = await cli('token', 'revoke', 'not-a-token-id')
    expect(revoke.exitCode).toBe(2)
  })

  test('every command answers --help with exit 0, and an unknown command lists the commands', async () => {
    for (const command of [
      ['user', 'add'],
      ['token', 'issue'],
      ['doc', 'import'],
      ['db', 'status'],
    ]) {
      const help = await cli(...command, '--help')
      expect(help.exitCode).toBe(0)
      expect(help.stdout).toContain(`usage: bun run cli -- ${command.join(' ')}`)
    }
    const unknown = await cli('frobnicate', 'now')
    expect(unknown.exitCode).toBe(2)
    expect(unknown.stderr).toContain('token issue HANDLE')
  })

  test('help and usage errors are answered without the database: also when it cannot be reached', async () => {
    // A PostgreSQL URL nothing listens on: any command that opened the database would fail on it.
    const unreachable = { DATA_DIR: run.db.dataDir, DATABASE_URL: 'postgresql://nobody:x@127.0.0.1:1/none' }
    const help = await runCli(['token', 'issue', '--help'], unreachable)
    expect(help).toMatchObject({ exitCode: 0, stderr: '' })
    expect(help.stdout).toContain('usage: bun run cli -- token issue HANDLE')
    const missing = await runCli(['token', 'issue'], unreachable)
    expect(missing.exitCode).toBe(2)
    expect(missing.stderr.trim()).toStartWith('HANDLE: missing (usage: token issue HANDLE')
    const unknownOption = await runCli(['user', 'list', '--colour'], unreachable)
    expect(unknownOption.exitCode).toBe(2)
    expect(unknownOption.stderr).toContain("'--colour'")
    expect(unknownOption.stderr).toContain('(usage: user list)')
    // The same command line with its arguments does reach the database, and fails there.
    const reaches = await runCli(['user', 'list'], unreachable)
    expect(reaches.exitCode).not.toBe(0)
  })

  test('db status and db migrate report an up-to-date database', async () => {
    const migrate = await cli('db', 'migrate')
    expect(migrate.exitCode).toBe(0)
    const status = await cli('db', 'status')
    expect(status.exitCode).toBe(0)
    expect(status.stdout).toContain('pending: none')
  })
})
