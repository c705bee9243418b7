/**
 * Issue 24: our phrasing writer (phrasing-writer.ts, attention-markers.ts, fast-safe.ts) replaces
 * mdast-util-to-markdown's for inline content because the library's cost ~20 µs a marked run, and must write
 * the same bytes. Differential: the library's writer (`phrasing: 'library'`) against ours over every
 * Markdown file of the corpus and of this repository (whole exports, agents' reads, bounded reads) and over
 * seeded random inline content in every place inline content is written from (phrasing-differential.ts).
 * Where ours leaves a container to the library, it says so (`fallbacks`): the tests also hold that it does
 * so only for the rare shape it is meant to (two attention runs of one kind next to each other, which only
 * an empty text run between them makes: Yjs holds none) and never for a densely marked paragraph.
 *
 * Here the first RANDOM_SAMPLE seeds of the random content; all 3,000 (and the count of fallbacks over
 * them) are phrasing-writer-random.slow.test.ts's, in the slow tier.
 */
import { describe, expect, test } from 'bun:test'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import * as Y from 'yjs'
import { importedDocumentUpdate } from '../create-document.ts'
import type { DocNode } from '../doc-json.ts'
import { FRAGMENT_NAME } from '../limits.ts'
import type { SerializeOptions } from '../markdown/blocks-to-mdast.ts'
import { documentMarkdownPrefix, documentToMarkdown } from '../markdown/document-to-markdown.ts'
import { importMarkdown } from '../markdown/import-markdown.ts'
import { blocksToMarkdown } from '../markdown/serialize-markdown.ts'
import { corpusFiles } from './corpus-files.ts'
import {
  both,
  contentsWithoutEmptyRunsAgree,
  PAIRING_FALLBACK,
  randomContentsAgree,
} from './phrasing-differential.ts'

/** Seeds of random content tried here (the slow tier tries 3,000). */
const RANDOM_SAMPLE = 300

const REPOSITORY = resolve(import.meta.dir, '../../../..')

/** This repository's own Markdown files: its README, AGENTS.md, docs/ and the bench notes. */
function repositoryFiles(): string[] {
  const files = ['README.md', 'AGENTS.md', 'bench/notes.md'].map((name) => join(REPOSITORY, name))
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(join(dir, entry.name))
      else if (entry.name.endsWith('.md')) files.push(join(dir, entry.name))
    }
  }
  walk(join(REPOSITORY, 'docs'))
  return files.filter((file) => existsSync(file))
}

function imported(markdown: string): Y.XmlFragment | undefined {
  const result = importMarkdown(markdown, { fallbackTitle: 'file-name' })
  if (result.kind === 'error') return undefined
  const update = importedDocumentUpdate(result.value)
  if (update.kind === 'error') return undefined
  const doc = new Y.Doc()
  Y.applyUpdate(doc, update.value)
  return doc.getXmlFragment(FRAGMENT_NAME)
}

const VIEWS: SerializeOptions[] = [{}, { suggestions: 'show' }, { media: 'source' }]

describe('our phrasing writer writes the bytes the library writes', () => {
  test('every Markdown file of the corpus and of this repository: exports, reads and bounded reads', () => {
    const files = [...corpusFiles(), ...repositoryFiles()]
    let checked = 0
    const fallbacks: string[] = []
    for (const file of files) {
      const fragment = imported(readFileSync(file, 'utf8'))
      if (!fragment) continue
      checked++
      for (const view of VIEWS) {
        const whole = both((phrasing) => documentToMarkdown(fragment, { ...view, phrasing }))
        expect(whole.ours, `${file} ${JSON.stringify(view)}`).toBe(whole.library)
        fallbacks.push(...whole.fallbacks)
      }
      for (const chars of [500, 20_001]) {
        const read = both((phrasing) =>
          documentMarkdownPrefix(fragment, chars, { suggestions: 'show', phrasing }, true),
        )
        expect(read.ours, `${file} first ${chars}`).toEqual(read.library)
        fallbacks.push(...read.fallbacks)
      }
    }
    // The corpus is installed (node_modules) and nearly all of it imports.
    expect(checked).toBeGreaterThan(30)
    expect(fallbacks).toEqual([])
  }, 180_000)

  test('the first 300 random inline contents, seeded, in paragraphs, headings, list and task items, quotes and cells', () => {
    // Left to the library: only adjacent attention of one kind.
    const reasons = randomContentsAgree(1, RANDOM_SAMPLE)
    expect(reasons.filter((reason) => reason !== PAIRING_FALLBACK)).toEqual([])
  })

  test('without empty text runs (content as Yjs holds it), ours writes the first 300 random contents itself', () => {
    expect(contentsWithoutEmptyRunsAgree(1, RANDOM_SAMPLE)).toEqual([])
  })

  test('an empty run between two struck runs is left to the library, which writes it alike', () => {
    const struck = (text: string): DocNode => ({ type: 'text', text, marks: [{ type: 'strike' }] })
    const blocks: DocNode[] = [
      { type: 'paragraph', content: [struck('-'), { type: 'text', text: '' }, struck('\t/{')] },
    ]
    const out = both((phrasing) => blocksToMarkdown(blocks, { phrasing }))
    expect(out.ours).toBe(out.library)
    expect(out.fallbacks).toEqual([PAIRING_FALLBACK])
  })

  test('a paragraph of 10,000 alternating bold and italic runs is written by ours, not the library', () => {
    const runs: DocNode[] = Array.from({ length: 10_000 }, (_, i) => ({
      type: 'text',
      text: i % 3 ? String.fromCharCode(97 + (i % 26)) : '*',
      marks: [{ type: i % 2 ? 'italic' : 'bold' }],
    }))
    const blocks: DocNode[] = [{ type: 'paragraph', content: runs }]
    const out = both((phrasing) => blocksToMarkdown(blocks, { phrasing }))
    expect(out.ours).toBe(out.library)
    expect(out.ours.startsWith('**\\***_b_**c**_\\*_')).toBe(true)
    expect(out.fallbacks).toEqual([])
  })
})
