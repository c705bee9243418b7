/**
 * The cases of import-export.test.ts and import-export-server.test.ts. Real Markdown files in and out
 * (issue 12): `doc import` while the server runs and while it does not, refusals that name the line and
 * leave nothing behind, `doc export` and import → export → import stability. A 20 MiB file in one command
 * is the slow tier's (`bun run test:slow`): import-large.slow.test.ts and import-large-server.slow.test.ts.
 *
 * Both ways run the one command code (run.ts `runCommand` over the same services); what differs is the
 * process around it: without a server the CLI process locks the folder, opens the database, starts the
 * import worker and closes them (~2.5 s of CPU a command on PGlite), with one the command and the file's
 * text cross the admin socket (its size bound: a file past the import limit is refused by the import,
 * not by the socket). So a real file's import and export run both ways, and what checks only the
 * command's own rules (the import → export → import stability, --title, refusals) runs once, while the
 * server runs.
 */
import { describe, expect, test } from 'bun:test'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { MAX_IMPORT_BYTES } from '@collab/doc-schema'
import { useCliDatabase } from '@collab/test-support/cli'
import { addUsers, DATABASE_KIND } from '@collab/test-support/database'

/** A file with everything issue 12 found refused or mangled: HTML logo, front matter, several # headings. */
const REAL_WORLD = `---
name: demo
version: 2
---
<p align="center">
  <img src="logo.svg" width="120">
</p>

# Demo tool

[![Build](https://img.shields.io/badge/build-passing-green.svg)](https://ci.example.com)

Intro with a [link](https://example.com/a^b) and \`code\`.

# Changelog

## v2

- [x] done
- [ ] todo

# License

MIT
`

/**
 * A generated file of about `bytes`, shaped like a long manual: sections of prose paragraphs, a list and a
 * code block (about 1.25 bytes of Yjs state per byte of Markdown; see MAX_IMPORT_BYTES).
 */
function largeMarkdown(bytes: number): string {
  const sentence = 'The quick brown fox jumps over the lazy dog while the server keeps every edit. '
  const parts: string[] = ['# Big manual\n']
  let size = 0
  for (let i = 0; size < bytes; i++) {
    const part = `\n## Part ${i}\n\n${sentence.repeat(12)}\n\n${sentence.repeat(10)}with a [link](https://example.com/${i}) and \`code\`.\n\n- ${sentence}\n- ${sentence}\n\n\`\`\`ts\nconst x = ${i}\n\`\`\`\n`
    parts.push(part)
    size += part.length
  }
  return parts.join('')
}

/**
 * The file's tests, once with the CLI opening the database itself (import-export.test.ts: a real file in
 * and out) and once while a server holds it, so each command runs inside the server (import-export-server.test.ts:
 * every case; the server in the test process): two files, so the two run beside each other.
 */
export function describeImportExport(withServer: boolean): void {
  describe(`doc import and export, ${withServer ? 'while the server runs' : 'without a server'} (${DATABASE_KIND})`, () => {
    // The only user (imports without --owner go to it), added before the server holds the database.
    const run = useCliDatabase({
      prepare: (services) => addUsers(services, ['ann']),
      server: withServer ? 'in-process' : false,
    })
    const { cli } = run

    test('a file with HTML at the top, front matter and several # headings imports in one command', async () => {
      const file = join(run.db.dataDir, 'demo.md')
      writeFileSync(file, REAL_WORLD)
      // No --owner: the only user owns it. Fails on the old import (second # refused, front matter mangled).
      const imported = await cli('doc', 'import', file)
      expect(imported.stderr).toContain('one level deeper')
      expect(imported.exitCode).toBe(0)
      const slug = imported.stdout.trim()
      expect(slug).toMatch(/^demo-tool-[a-z0-9]{6}$/)

      const out = join(run.db.dataDir, 'out.md')
      const exported = await cli('doc', 'export', slug, '--out', out)
      expect(exported.exitCode).toBe(0)
      const first = readFileSync(out, 'utf8')
      expect(first).toStartWith(
        '# Demo tool\n\n```yaml\nname: demo\nversion: 2\n```\n\n```html\n<p align="center">',
      )
      expect(first).toContain('\n## Changelog\n\n### v2\n')
      expect(first).toContain('- [x] done')

      // Import → export → import: the second export equals the first (the Markdown both ways, the same
      // code either way: checked while the server runs).
      if (!withServer) return
      const again = await cli('doc', 'import', out)
      expect(again.exitCode).toBe(0)
      const second = await cli('doc', 'export', again.stdout.trim())
      expect(second.exitCode).toBe(0)
      expect(second.stdout).toBe(first)
    })

    // The cases of the command's own rules: the same code both ways, so run once, while the server runs.
    if (!withServer) return

    test('--title: a leading # line with the same text is not repeated', async () => {
      const file = join(run.db.dataDir, 'titled.md')
      writeFileSync(file, '# Release notes\n\nText.\n')
      const imported = await cli('doc', 'import', file, '--title', 'Release notes')
      expect(imported.exitCode).toBe(0)
      const text = (await cli('doc', 'export', imported.stdout.trim())).stdout
      expect(text).toBe('# Release notes\n\nText.\n')
    })

    test('refusals name what to do and leave no document behind', async () => {
      const big = join(run.db.dataDir, 'too-big.md')
      writeFileSync(big, `# Too big\n\n${'x'.repeat(MAX_IMPORT_BYTES)}\n`)
      const refused = await cli('doc', 'import', big)
      expect(refused.exitCode).toBe(2)
      expect(refused.stderr).toContain('split the file')
      const long = join(run.db.dataDir, 'long-title.md')
      writeFileSync(long, `# ${'t'.repeat(201)}\n\nBody.\n`)
      const titled = await cli('doc', 'import', long)
      expect(titled.exitCode).toBe(2)
      expect(titled.stderr).toStartWith('title:')
      const list = (await cli('doc', 'list')).stdout
      expect(list).not.toContain('Too big')
      expect(list).not.toContain('ttttt')
      const missing = await cli('doc', 'export', 'no-such-doc')
      expect(missing.exitCode).toBe(2)
    }, 120_000)
  })
}

/**
 * The 20 MiB import, once without a server and once while one runs (import-large.slow.test.ts and
 * import-large-server.slow.test.ts, so the two run beside each other). Each is ~20 s of CPU, most of a
 * pass's import time: the size is what it tests (a person's manual near MAX_IMPORT_BYTES through the
 * import worker, the sliced writes of a large state and a whole export), so it is not made smaller; it
 * runs in the slow tier, its own CI step (`bun run test:slow`, .ci/run).
 */
export function describeLargeImport(withServer: boolean): void {
  describe(`doc import of a large file, ${withServer ? 'while the server runs' : 'without a server'} (${DATABASE_KIND})`, () => {
    // The only user (imports without --owner go to it), added before the server holds the database.
    const run = useCliDatabase({ prepare: (services) => addUsers(services, ['ann']), server: withServer })
    const { cli } = run

    test('a 20 MiB file imports in one command and exports whole', async () => {
      const markdown = largeMarkdown(20 * 1024 * 1024)
      const file = join(run.db.dataDir, 'big.md')
      writeFileSync(file, markdown)
      const imported = await cli('doc', 'import', file)
      expect(imported.stderr).toBe('')
      expect(imported.exitCode).toBe(0)
      const exported = await cli('doc', 'export', imported.stdout.trim())
      expect(exported.exitCode).toBe(0)
      expect(exported.stdout.length).toBeGreaterThan(20 * 1024 * 1024 * 0.9)
      expect(exported.stdout).toContain('## Part 0\n')
    }, 240_000)
  })
}
