/**
 * The CLI as people run it: real processes, exit codes and output streams. Users, tokens, help and the
 * database's commands here; the documents' commands in cli-documents.test.ts (two files, so their
 * processes run beside each other).
 *
 * Two ways a command meets the database, as on an operator's machine. With no server running, the
 * command opens the database itself (~2.5 s of CPU a command on PGlite, its start): the first block, a
 * few commands that show that path whole (a write, its refusal's exit code, a later process reading what
 * the first wrote, a token on stdout with nothing else, db migrate with the server down), on
 * two databases of their own whose commands run beside each other. The commands' own checks and messages
 * (db status, bad handles, token options, list and revoke) run the same command code inside a running
 * server (run.ts `runCommand`, over the admin socket on PGlite, cli/admin-channel.ts): the second block
 * hands them to the process's shared server (~0.3 s of CPU a command) instead of paying the start for
 * each.
 */
import { describe, expect, test } from 'bun:test'
import { useCliDatabase, useSharedCliServer } from '@collab/test-support/cli'
import { addUsers, DATABASE_KIND } from '@collab/test-support/database'
import { runCli } from '@collab/test-support/process'

/** A token as `token issue` prints it: the token alone on stdout. */
const TOKEN_LINE = /^ctk_[0-9a-f]{12}_[A-Za-z0-9_-]{43}\n$/

describe(`CLI with no server running: each command opens the database (${DATABASE_KIND})`, () => {
  const people = useCliDatabase()
  const database = useCliDatabase()

  // Two databases, so the two tests' processes run at once (one process opens a folder at a time).
  test.concurrent('user add creates a user a later process lists; a duplicate is one line on stderr and exit 2; token issue prints the token alone', async () => {
    const added = await people.cli('user', 'add', 'ada', '--name', 'Ada Lovelace')
    expect(added).toMatchObject({ exitCode: 0, stdout: 'ada\n' })
    const dup = await people.cli('user', 'add', 'ada')
    expect(dup.exitCode).toBe(2)
    expect(dup.stderr.trim().split('\n')).toHaveLength(1)
    expect(dup.stderr).toContain('already exists')
    const list = await people.cli('user', 'list')
    expect(list.stdout).toContain('ada')
    expect(list.stdout).toContain('Ada Lovelace')
    // Nothing of the process's own (its database's start, logs) reaches stdout beside the token.
    const issued = await people.cli('token', 'issue', 'ada', '--scope', 'read')
    expect(issued.exitCode).toBe(0)
    expect(issued.stdout).toMatch(TOKEN_LINE)
  })

  // As an operator upgrades: the migrations run while the server is down, before it starts.
  test.concurrent('db migrate on a database no server holds reports it up to date', async () => {
    const migrate = await database.cli('db', 'migrate')
    expect(migrate.exitCode).toBe(0)
    expect(migrate.stdout).toBe('database is up to date\n')
  })

  test('help and usage errors are answered without the database: also when it cannot be reached', async () => {
    // A PostgreSQL URL nothing listens on: any command that opened the database would fail on it.
    const unreachable = {
      DATA_DIR: people.db.dataDir,
      DATABASE_URL: 'postgresql://nobody:x@127.0.0.1:1/none',
    }
    const help = await runCli(['token', 'issue', '--help'], unreachable)
    expect(help).toMatchObject({ exitCode: 0, stderr: '' })
    expect(help.stdout).toContain('usage: bun run cli -- token issue HANDLE')
    const missing = await runCli(['token', 'issue'], unreachable)
    expect(missing.exitCode).toBe(2)
    expect(missing.stderr.trim()).toStartWith('HANDLE: missing (usage: token issue HANDLE')
    // A token's scope and lifetime are the command's own rules, checked before a database is opened.
    const badScope = await runCli(['token', 'issue', 'someone', '--scope', 'admin'], unreachable)
    expect(badScope.exitCode).toBe(2)
    expect(badScope.stderr.trim()).toBe(
      '--scope: "admin" is not one of read, write, read,write, suggest, read,suggest',
    )
    const badDays = await runCli(['token', 'issue', 'someone', '--expires-days', 'soon'], unreachable)
    expect(badDays.exitCode).toBe(2)
    expect(badDays.stderr.trim()).toBe('--expires-days: "soon" is not a whole number of days')
    const unknownOption = await runCli(['user', 'list', '--colour'], unreachable)
    expect(unknownOption.exitCode).toBe(2)
    expect(unknownOption.stderr).toContain("'--colour'")
    expect(unknownOption.stderr).toContain('(usage: user list)')
    // The same command line with its arguments does reach the database, and fails there.
    const reaches = await runCli(['user', 'list'], unreachable)
    expect(reaches.exitCode).not.toBe(0)
  })

  test('every command answers --help with exit 0, and an unknown command lists the commands', async () => {
    for (const command of [
      ['user', 'add'],
      ['token', 'issue'],
      ['doc', 'import'],
      ['db', 'status'],
    ]) {
      const help = await people.cli(...command, '--help')
      expect(help.exitCode).toBe(0)
      expect(help.stdout).toContain(`usage: bun run cli -- ${command.join(' ')}`)
    }
    const unknown = await people.cli('frobnicate', 'now')
    expect(unknown.exitCode).toBe(2)
    expect(unknown.stderr).toContain('token issue HANDLE')
  })
})

describe(`CLI with a server running: the commands' own checks and messages (${DATABASE_KIND})`, () => {
  // The users the token tests start from, this file's own on the shared server.
  const run = useSharedCliServer({
    prepare: async (services, share) => {
      await addUsers(services, [share.handle('bert'), share.handle('cleo')])
      return { bert: share.handle('bert'), cleo: share.handle('cleo') }
    },
  })
  const { cli } = run

  test('db status reports an up-to-date database', async () => {
    const status = await cli('db', 'status')
    expect(status.exitCode).toBe(0)
    expect(status.stdout).toContain('pending: none')
  })

  test('a bad handle is one line on stderr and exit 2', async () => {
    const bad = await cli('user', 'add', 'Not A Handle!')
    expect(bad.exitCode).toBe(2)
    expect(bad.stderr).toStartWith('HANDLE:')
    expect(bad.stderr.trim().split('\n')).toHaveLength(1)
  })

  test('token issue prints the token and nothing else on stdout; list and revoke manage it', async () => {
    const { bert } = run.prepared
    const issued = await cli(
      'token',
      'issue',
      bert,
      '--scope',
      'read',
      '--label',
      'laptop',
      '--expires-days',
      '30',
    )
    expect(issued.exitCode).toBe(0)
    expect(issued.stdout).toMatch(TOKEN_LINE)
    const id = /^ctk_([0-9a-f]{12})_/.exec(issued.stdout)![1]!
    const list = await cli('token', 'list', bert)
    expect(list.stdout).toContain(id)
    expect(list.stdout).toContain('laptop')
    expect(list.stdout).toMatch(new RegExp(`${id}\\s+read\\s+active`))
    expect(list.stdout).not.toContain(issued.stdout.trim()) // the secret is never shown again
    expect((await cli('token', 'revoke', id)).exitCode).toBe(0)
    expect((await cli('token', 'list', bert)).stdout).toMatch(new RegExp(`${id}\\s+read\\s+revoked`))
  })

  test('token errors name the option and exit 2', async () => {
    const { cleo } = run.prepared
    const scope = await cli('token', 'issue', cleo, '--scope', 'admin')
    expect(scope.exitCode).toBe(2)
    expect(scope.stderr).toStartWith('--scope:')
    const days = await cli('token', 'issue', cleo, '--expires-days', 'soon')
    expect(days.exitCode).toBe(2)
    expect(days.stderr).toStartWith('--expires-days:')
    const who = await cli('token', 'issue', 'nobody-here')
    expect(who.exitCode).toBe(2)
    expect(who.stderr).toStartWith('HANDLE:')
    const unknownOption = await cli('token', 'issue', cleo, '--colour', 'red')
    expect(unknownOption.exitCode).toBe(2)
    const revoke = await cli('token', 'revoke', 'not-a-token-id')
    expect(revoke.exitCode).toBe(2)
  })
})
