/**
 * The CLI's document commands as people run them: real processes, real database, exit codes and output
 * streams, on a terminal and off it. Users, tokens and help are in cli.test.ts.
 *
 * On the embedded database a server holds it while they run, as on an operator's machine where it is up:
 * each command is then handed to it through the admin socket (cli/admin-channel.ts) instead of opening
 * PGlite itself (~3 s of CPU a process: this file's 14 commands took ~45 s of a test run that way). The
 * server is the process's shared one (`useSharedCliServer`: no server start of the file's own), so the
 * users are this file's handles on it. On PostgreSQL a command connects itself whether a server runs or
 * not. What the tests check is the same either way: the command runs the same `run` over the same
 * services, and the CLI process reads the files, writes --out and escapes what reaches a terminal. The
 * document commands opening the embedded database themselves are import-export.test.ts's.
 */
import { describe, expect, test } from 'bun:test'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { MAX_TITLE_CHARS } from '@collab/doc-schema'
import { useSharedCliServer } from '@collab/test-support/cli'
import { addUsers, DATABASE_KIND } from '@collab/test-support/database'
import { APP_DIR, REPO_DIR } from '@collab/test-support/process'
import { escapeControls } from '../cli/terminal-text.ts'

/** util-linux `script`, which runs a command under a pseudo-terminal (the operator's terminal). */
const SCRIPT = Bun.which('script')

const EVIL_TITLE = 'Bell \u001b]0;pwned\u0007 title'
const EVIL_BODY = 'Text \u001b[2J cleared \u0007 and \u009b done.'

describe(`CLI documents (${DATABASE_KIND})`, () => {
  // What the tests start from, through the server's services rather than a CLI process per step: the
  // users (this file's handles), and the document with control characters in its title and text, owned
  // by mallory (its slug).
  const run = useSharedCliServer({
    prepare: async (services, share) => {
      const [dora, eli, gus, fay, mallory, nina] = ['dora', 'eli', 'gus', 'fay', 'mallory', 'nina'].map(
        share.handle,
      ) as [string, string, string, string, string, string]
      const users = await addUsers(services, [dora, eli, gus, fay, mallory, [nina, 'Nina \u001b[31mRed']])
      const owner = users.find((user) => user.handle === mallory)!
      const imported = await services.documents.importMarkdown(owner.id, {
        markdown: `# ${EVIL_TITLE}\n\n${EVIL_BODY}\n`,
        fallbackTitle: 'evil',
      })
      if (imported.kind === 'error') throw new Error(imported.message)
      return { slug: imported.value.document.slug, dora, eli, gus, fay, mallory }
    },
  })
  const { cli } = run

  test('doc import creates a document from Markdown; list, share and unshare work on its slug', async () => {
    const { dora, eli } = run.prepared
    const file = join(run.folder, 'notes.md')
    writeFileSync(file, '# Team notes\n\nFirst paragraph.\n\n## Decisions\n\n- ship it\n')
    const imported = await cli('doc', 'import', file, '--owner', dora)
    expect(imported.exitCode).toBe(0)
    const notes = imported.stdout.trim()
    expect(notes).toMatch(/^team-notes-[a-z0-9]{6}$/) // always a random tail: a slug reveals no other title
    const list = await cli('doc', 'list', '--owner', dora)
    expect(list.stdout).toMatch(
      new RegExp(`team-notes-[a-z0-9]{6}\\s+${dora}\\s+private\\s+\\S+\\s+Team notes`),
    )
    expect((await cli('doc', 'share', notes, eli, '--role', 'viewer')).stdout).toContain(`${eli} is a viewer`)
    expect((await cli('doc', 'unshare', notes, eli)).stdout).toContain(`${eli} removed`)
    const badRole = await cli('doc', 'share', notes, eli, '--role', 'boss')
    expect(badRole.exitCode).toBe(2)
    expect(badRole.stderr).toStartWith('--role:')
    const missing = await cli('doc', 'share', 'no-such-doc', eli, '--role', 'editor')
    expect(missing.exitCode).toBe(2)
    expect(missing.stderr).toStartWith('slug:')
  })

  test('doc import reads its FILE argument, not an option value that looks like a file name', async () => {
    const file = join(run.folder, 'README') // no extension
    writeFileSync(file, 'Plain notes.\n')
    const imported = await cli('doc', 'import', '--title', 'Release v1.2', file, '--owner', run.prepared.gus)
    expect(imported.stderr).toBe('')
    expect(imported.exitCode).toBe(0)
    expect(imported.stdout.trim()).toMatch(/^release-v1-2-[a-z0-9]{6}$/)
  })

  test('doc import refuses what the document model refuses and leaves no document', async () => {
    const { fay } = run.prepared
    const file = join(run.folder, 'long-title.md')
    writeFileSync(file, `# One ${'x'.repeat(MAX_TITLE_CHARS)}\n\ntext\n`)
    const refused = await cli('doc', 'import', file, '--owner', fay)
    expect(refused.exitCode).toBe(2)
    expect(refused.stderr.trim().split('\n')).toHaveLength(1)
    expect((await cli('doc', 'list', '--owner', fay)).stdout).not.toContain('one-xxxx')
    const unreadable = await cli('doc', 'import', join(run.folder, 'absent.md'), '--owner', fay)
    expect(unreadable.exitCode).toBe(2)
    expect(unreadable.stderr).toStartWith('FILE:')
  })

  // Caught: `doc export` (and titles in `doc list`) wrote a document's ESC, BEL and C1 bytes raw to the
  // operator's terminal, which runs them (here: retitle the window, clear the screen).
  describe.skipIf(!SCRIPT)('control characters in document text, on a terminal and off it', () => {
    // mallory's document with EVIL_TITLE and EVIL_BODY (`run.prepared.slug`) is made before the file's tests.
    /** The CLI under a real pseudo-terminal (util-linux `script`): what the operator's terminal receives. */
    async function onTerminal(...args: string[]): Promise<string> {
      const command = ['bun', join(APP_DIR, 'src/cli/main.ts'), ...args].map((a) => `'${a}'`).join(' ')
      const proc = Bun.spawn([SCRIPT!, '-qec', command, '/dev/null'], {
        cwd: REPO_DIR,
        env: { ...process.env, LOG_LEVEL: 'warn', ...run.env },
        stdin: 'ignore',
        stdout: 'pipe',
        stderr: 'pipe',
      })
      const [out] = await Promise.all([new Response(proc.stdout).text(), proc.exited])
      return out
    }

    test('doc export to a terminal shows them escaped, and says so on stderr', async () => {
      const shown = await onTerminal('doc', 'export', run.prepared.slug)
      expect(shown).toContain('# Bell \\u001b]0;pwned\\u0007 title')
      expect(shown).toContain('Text \\u001b[2J cleared \\u0007 and \\u009b done.')
      // None is left raw (\r excepted: the terminal's own line ends).
      expect(escapeControls(shown.replaceAll('\r', '')).escaped).toBe(0)
      expect(shown).toContain('note: 5 control characters were shown escaped')
      expect(shown).toContain('use --out FILE or redirect stdout for the exact text')
    })

    test('doc list and user list on a terminal escape them too (one rule for every command)', async () => {
      // nina (made before the file's tests) is named 'Nina \u001b[31mRed'.
      const docs = await onTerminal('doc', 'list', '--owner', run.prepared.mallory)
      expect(docs).toContain(run.prepared.slug)
      expect(docs).toContain('Bell \\u001b]0;pwned\\u0007 title')
      expect(docs).not.toContain('\u001b')
      const users = await onTerminal('user', 'list')
      expect(users).toContain('Nina \\u001b[31mRed')
      expect(users).not.toContain('\u001b')
    })

    test('to a pipe or a file the bytes stay exact, with no note', async () => {
      const piped = await cli('doc', 'export', run.prepared.slug)
      expect(piped.exitCode).toBe(0)
      expect(piped.stdout).toBe(`# ${EVIL_TITLE}\n\n${EVIL_BODY}\n`)
      expect(piped.stderr).toBe('')
      const out = join(run.folder, 'exported.md')
      const toFile = await onTerminal('doc', 'export', run.prepared.slug, '--out', out)
      expect(toFile).not.toContain('note:')
      expect(readFileSync(out, 'utf8')).toBe(`# ${EVIL_TITLE}\n\n${EVIL_BODY}\n`)
    })
  })
})
