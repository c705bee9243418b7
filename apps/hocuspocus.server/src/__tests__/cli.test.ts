/** The CLI as people run it: real processes, real database, exit codes and output streams. */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { MAX_TITLE_CHARS } from '@collab/doc-schema'
import { escapeControls } from '../cli/terminal-text.ts'
import { createTestDatabase, DATABASE_KIND, type TestDatabase } from './helpers/database.ts'
import { APP_DIR, REPO_DIR, runCli } from './helpers/process.ts'

/** util-linux `script`, which runs a command under a pseudo-terminal (the operator's terminal). */
const SCRIPT = Bun.which('script')

describe(`CLI (${DATABASE_KIND})`, () => {
  let db: TestDatabase
  let env: Record<string, string | undefined>
  const cli = (...args: string[]) => runCli(args, env)

  beforeAll(async () => {
    db = await createTestDatabase()
    env = { DATA_DIR: db.dataDir, DATABASE_URL: db.databaseUrl ?? '' }
  }, 60_000)
  afterAll(async () => {
    await db?.cleanup()
  }, 60_000)

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
    await cli('user', 'add', 'bert')
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
    await cli('user', 'add', 'cleo')
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

  test('doc import creates a document from Markdown; list, share and unshare work on its slug', async () => {
    await cli('user', 'add', 'dora')
    await cli('user', 'add', 'eli')
    const file = join(db.dataDir, 'notes.md')
    writeFileSync(file, '# Team notes\n\nFirst paragraph.\n\n## Decisions\n\n- ship it\n')
    const imported = await cli('doc', 'import', file, '--owner', 'dora')
    expect(imported.exitCode).toBe(0)
    const slug = imported.stdout.trim()
    expect(slug).toMatch(/^team-notes-[a-z0-9]{6}$/) // always a random tail: a slug reveals no other title
    const list = await cli('doc', 'list', '--owner', 'dora')
    expect(list.stdout).toMatch(/team-notes-[a-z0-9]{6}\s+dora\s+private\s+\S+\s+Team notes/)
    expect((await cli('doc', 'share', slug, 'eli', '--role', 'viewer')).stdout).toContain('eli is a viewer')
    expect((await cli('doc', 'unshare', slug, 'eli')).stdout).toContain('eli removed')
    const badRole = await cli('doc', 'share', slug, 'eli', '--role', 'boss')
    expect(badRole.exitCode).toBe(2)
    expect(badRole.stderr).toStartWith('--role:')
    const missing = await cli('doc', 'share', 'no-such-doc', 'eli', '--role', 'editor')
    expect(missing.exitCode).toBe(2)
    expect(missing.stderr).toStartWith('slug:')
  })

  test('doc import reads its FILE argument, not an option value that looks like a file name', async () => {
    await cli('user', 'add', 'gus')
    const file = join(db.dataDir, 'README') // no extension
    writeFileSync(file, 'Plain notes.\n')
    const imported = await cli('doc', 'import', '--title', 'Release v1.2', file, '--owner', 'gus')
    expect(imported.stderr).toBe('')
    expect(imported.exitCode).toBe(0)
    expect(imported.stdout.trim()).toMatch(/^release-v1-2-[a-z0-9]{6}$/)
  })

  test('doc import refuses what the document model refuses and leaves no document', async () => {
    await cli('user', 'add', 'fay')
    const file = join(db.dataDir, 'long-title.md')
    writeFileSync(file, `# One ${'x'.repeat(MAX_TITLE_CHARS)}\n\ntext\n`)
    const refused = await cli('doc', 'import', file, '--owner', 'fay')
    expect(refused.exitCode).toBe(2)
    expect(refused.stderr.trim().split('\n')).toHaveLength(1)
    expect((await cli('doc', 'list', '--owner', 'fay')).stdout).not.toContain('one')
    const unreadable = await cli('doc', 'import', join(db.dataDir, 'absent.md'), '--owner', 'fay')
    expect(unreadable.exitCode).toBe(2)
    expect(unreadable.stderr).toStartWith('FILE:')
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
    const unreachable = { DATA_DIR: db.dataDir, DATABASE_URL: 'postgresql://nobody:x@127.0.0.1:1/none' }
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

  // Caught: `doc export` (and titles in `doc list`) wrote a document's ESC, BEL and C1 bytes raw to the
  // operator's terminal, which runs them (here: retitle the window, clear the screen).
  describe.skipIf(!SCRIPT)('control characters in document text, on a terminal and off it', () => {
    const EVIL_TITLE = 'Bell \u001b]0;pwned\u0007 title'
    const EVIL_BODY = 'Text \u001b[2J cleared \u0007 and \u009b done.'
    let slug: string
    beforeAll(async () => {
      await cli('user', 'add', 'mallory')
      const file = join(db.dataDir, 'evil.md')
      writeFileSync(file, `# ${EVIL_TITLE}\n\n${EVIL_BODY}\n`)
      const imported = await cli('doc', 'import', file, '--owner', 'mallory')
      expect(imported.exitCode).toBe(0)
      slug = imported.stdout.trim()
    })

    /** The CLI under a real pseudo-terminal (util-linux `script`): what the operator's terminal receives. */
    async function onTerminal(...args: string[]): Promise<string> {
      const command = ['bun', join(APP_DIR, 'src/cli/main.ts'), ...args].map((a) => `'${a}'`).join(' ')
      const proc = Bun.spawn([SCRIPT!, '-qec', command, '/dev/null'], {
        cwd: REPO_DIR,
        env: { ...process.env, LOG_LEVEL: 'warn', ...env },
        stdin: 'ignore',
        stdout: 'pipe',
        stderr: 'pipe',
      })
      const [out] = await Promise.all([new Response(proc.stdout).text(), proc.exited])
      return out
    }

    test('doc export to a terminal shows them escaped, and says so on stderr', async () => {
      const shown = await onTerminal('doc', 'export', slug)
      expect(shown).toContain('# Bell \\u001b]0;pwned\\u0007 title')
      expect(shown).toContain('Text \\u001b[2J cleared \\u0007 and \\u009b done.')
      // None is left raw (\r excepted: the terminal's own line ends).
      expect(escapeControls(shown.replaceAll('\r', '')).escaped).toBe(0)
      expect(shown).toContain('note: 5 control characters were shown escaped')
      expect(shown).toContain('use --out FILE or redirect stdout for the exact text')
    })

    test('doc list and user list on a terminal escape them too (one rule for every command)', async () => {
      await cli('user', 'add', 'nina', '--name', 'Nina \u001b[31mRed')
      const docs = await onTerminal('doc', 'list', '--owner', 'mallory')
      expect(docs).toContain(`${slug}`)
      expect(docs).toContain('Bell \\u001b]0;pwned\\u0007 title')
      expect(docs).not.toContain('\u001b')
      const users = await onTerminal('user', 'list')
      expect(users).toContain('Nina \\u001b[31mRed')
      expect(users).not.toContain('\u001b')
    })

    test('to a pipe or a file the bytes stay exact, with no note', async () => {
      const piped = await cli('doc', 'export', slug)
      expect(piped.exitCode).toBe(0)
      expect(piped.stdout).toBe(`# ${EVIL_TITLE}\n\n${EVIL_BODY}\n`)
      expect(piped.stderr).toBe('')
      const out = join(db.dataDir, 'exported.md')
      const toFile = await onTerminal('doc', 'export', slug, '--out', out)
      expect(toFile).not.toContain('note:')
      expect(readFileSync(out, 'utf8')).toBe(`# ${EVIL_TITLE}\n\n${EVIL_BODY}\n`)
    })
  })
})
