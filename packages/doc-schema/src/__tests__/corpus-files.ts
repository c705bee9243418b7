/**
 * The real Markdown files of the corpus tests: READMEs and CHANGELOGs that `bun install` puts in
 * node_modules, read in place (nothing is copied into the repository), chosen by package so the corpus is
 * varied. The same packages as markdown-import.test.ts's import → export corpus.
 */
import { existsSync, readdirSync } from 'node:fs'
import { join, resolve } from 'node:path'

export const CORPUS_PACKAGES = [
  'accepts',
  'better-result',
  'commander',
  'd3-geo',
  'denque',
  'encodeurl',
  'eventsource',
  'fast-check',
  'function-bind',
  'http-errors',
  'lib0',
  'mdast-util-gfm-table',
  'micromark-factory-whitespace',
  'micromark-util-subtokenize',
  'parseurl',
  'pino-std-serializers',
  'prosemirror-dropcursor',
  'prosemirror-view',
  'redis-parser',
  'side-channel',
  'type-is',
  'y-protocols',
  'zod',
  'hono',
  'yjs',
]

export const MODULES = resolve(import.meta.dir, '../../../../node_modules/.bun/node_modules')

/** The corpus's README and CHANGELOG files that are installed here. */
export function corpusFiles(): string[] {
  const files: string[] = []
  for (const name of CORPUS_PACKAGES) {
    const dir = join(MODULES, name)
    if (!existsSync(dir)) continue
    for (const entry of readdirSync(dir)) {
      if (/^(readme|changelog)\.md$/i.test(entry)) files.push(join(dir, entry))
    }
  }
  return files
}
