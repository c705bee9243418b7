/**
 * Issue 24: our phrasing writer (phrasing-writer.ts, attention-markers.ts, fast-safe.ts) replaces
 * mdast-util-to-markdown's for inline content because the library's cost ~20 µs a marked run, and must write
 * the same bytes. Differential: the library's writer (`phrasing: 'library'`) against ours over every
 * Markdown file of the corpus and of this repository (whole exports, agents' reads, bounded reads) and over
 * seeded random inline content in every place inline content is written from. Where ours leaves a
 * container to the library, it says so (`fallbacks`): the tests also hold that it does so only for the
 * rare shape it is meant to (two attention runs of one kind next to each other, which only an empty text
 * run between them makes: Yjs holds none) and never for a densely marked paragraph.
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
import { blocksToMarkdown, blocksToMarkdownPrefix } from '../markdown/serialize-markdown.ts'
import { corpusFiles } from './corpus-files.ts'
import { inContext, randomInline } from './random-inline.ts'
import { seededRandom } from './seeded-random.ts'

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

/** Both writers' output of `render`, with ours's fallbacks. */
function both<T>(render: (phrasing: SerializeOptions['phrasing']) => T): {
  library: T
  ours: T
  fallbacks: string[]
} {
  const fallbacks: string[] = []
  const attempt = (phrasing: SerializeOptions['phrasing']): T => {
    try {
      return render(phrasing)
    } catch (error) {
      return `threw: ${(error as Error).message}` as T
    }
  }
  return { library: attempt('library'), ours: attempt({ fallbacks }), fallbacks }
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

  test('6,000 random inline contents, seeded, in paragraphs, headings, list and task items, quotes and cells', () => {
    const reasons: string[] = []
    for (let seed = 1; seed <= 3_000; seed++) {
      const rng = seededRandom(seed)
      const blocks = inContext(rng, randomInline(rng))
      for (const view of [{}, { suggestions: 'show' } as const]) {
        const out = both((phrasing) => blocksToMarkdown(blocks, { ...view, phrasing }))
        expect(out.ours, `seed ${seed} ${JSON.stringify(view)}`).toBe(out.library)
        reasons.push(...out.fallbacks)
      }
      // A bounded read writes the same start (its own root handler).
      const cut = both((phrasing) => blocksToMarkdownPrefix(blocks, 40, { phrasing }))
      expect(cut.ours, `seed ${seed} prefix`).toEqual(cut.library)
    }
    // Left to the library: only adjacent attention of one kind, and rarely.
    expect(new Set(reasons)).toEqual(new Set(['attention markers that do not pair as first guessed']))
    expect(reasons.length).toBeLessThan(20)
  }, 180_000)

  test('without empty text runs (content as Yjs holds it), ours writes every random content itself', () => {
    const reasons: string[] = []
    for (let seed = 1; seed <= 3_000; seed++) {
      const rng = seededRandom(seed)
      const inline = randomInline(rng).filter((node) => node.type !== 'text' || node.text !== '')
      const blocks = inContext(rng, inline)
      const out = both((phrasing) => blocksToMarkdown(blocks, { suggestions: 'show', phrasing }))
      expect(out.ours, `seed ${seed}`).toBe(out.library)
      reasons.push(...out.fallbacks)
    }
    expect(reasons).toEqual([])
  }, 120_000)

  test('an empty run between two struck runs is left to the library, which writes it alike', () => {
    const struck = (text: string): DocNode => ({ type: 'text', text, marks: [{ type: 'strike' }] })
    const blocks: DocNode[] = [
      { type: 'paragraph', content: [struck('-'), { type: 'text', text: '' }, struck('\t/{')] },
    ]
    const out = both((phrasing) => blocksToMarkdown(blocks, { phrasing }))
    expect(out.ours).toBe(out.library)
    expect(out.fallbacks).toEqual(['attention markers that do not pair as first guessed'])
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
