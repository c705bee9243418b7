import { expect } from 'bun:test'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import fc from 'fast-check'
import * as Y from 'yjs'
import { createDocumentUpdate, importedDocumentUpdate } from '../create-document.ts'
import { FRAGMENT_NAME, MAX_IMPORT_ELEMENTS } from '../limits.ts'
import { importMarkdown } from '../markdown/import-markdown.ts'
import type { Result } from '../result.ts'
import { listSections } from '../sections/section-index.ts'
import { runs } from './property-runs.ts'

/**
 * A Y.Doc holding a new document, as a store would load it from its first update. Fixtures may be larger
 * than one write (MAX_WRITE_ELEMENTS): they are built with an import's element ceiling.
 */
export function loadDocument(title: string, markdown?: string): { doc: Y.Doc; fragment: Y.XmlFragment } {
  const update = createDocumentUpdate(title, markdown, { elements: MAX_IMPORT_ELEMENTS })
  if (update.kind === 'error')
    throw new Error(`fixture refused: ${update.reason ?? update.code}: ${update.message}`)
  const doc = new Y.Doc()
  Y.applyUpdate(doc, update.value)
  return { doc, fragment: doc.getXmlFragment(FRAGMENT_NAME) }
}

/**
 * A document of `blocks` (Markdown blocks) with up to two of its top-level elements after the title
 * deleted (`cut`, `at`: drawn numbers), and the section ids it listed before. Without garbage collection,
 * so a deleted item keeps its content in Yjs's item list and the walks must skip it.
 */
export function withDeletions(
  blocks: string[],
  cut: number,
  at: number,
): { fragment: Y.XmlFragment; ids: string[] } {
  const doc = new Y.Doc({ gc: false })
  Y.applyUpdate(doc, Y.encodeStateAsUpdate(loadDocument('Doc', blocks.join('\n\n')).doc))
  const fragment = doc.getXmlFragment(FRAGMENT_NAME)
  const ids = listSections(fragment).map((s) => s.sectionId)
  if (fragment.length > 1)
    fragment.delete(
      1 + (at % (fragment.length - 1)),
      Math.min(cut % 3, fragment.length - 1 - (at % (fragment.length - 1))),
    )
  return { fragment, ids }
}

/** A copy of a Y.Doc through its encoded state, as another process would see it. */
export function cloneDocument(doc: Y.Doc): { doc: Y.Doc; fragment: Y.XmlFragment } {
  const copy = new Y.Doc()
  Y.applyUpdate(copy, Y.encodeStateAsUpdate(doc))
  return { doc: copy, fragment: copy.getXmlFragment(FRAGMENT_NAME) }
}

/** What `editor` changes, as the update a sync message to the holder of `server` would carry. */
export function changeOf(server: Y.Doc, editor: Y.Doc, change: () => void): Uint8Array {
  const before = Y.encodeStateVector(server)
  editor.transact(change)
  return Y.encodeStateAsUpdate(editor, before)
}

export function expectOk<T>(result: Result<T>): T {
  if (result.kind === 'error')
    throw new Error(`expected ok, got ${result.reason ?? result.code}: ${result.message}`)
  return result.value
}

const MODULES = resolve(import.meta.dir, '../../../../node_modules/.bun/node_modules')

/**
 * Real Markdown files: the READMEs and CHANGELOGs of these installed packages, read in place, and the
 * property over them that the paging tests run.
 */
export class RealFiles {
  readonly paths: string[] = []

  constructor(packages: readonly string[]) {
    for (const name of packages) {
      const dir = join(MODULES, name)
      if (!existsSync(dir)) continue
      for (const entry of readdirSync(dir))
        if (/^(readme|changelog)\.md$/i.test(entry)) this.paths.push(join(dir, entry))
    }
  }

  /** `check` on every section of a drawn file (loaded once) at a drawn budget from 200 to 3,000 characters. */
  everySectionAtDrawnBudgets(
    numRuns: number,
    check: (fragment: Y.XmlFragment, sectionId: string, maxChars: number) => void,
  ): void {
    const fragments = this.paths.map(loadFile)
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: fragments.length - 1 }),
        fc.integer({ min: 200, max: 3_000 }),
        (index, maxChars) => {
          const fragment = fragments[index]!
          for (const { sectionId } of listSections(fragment)) check(fragment, sectionId, maxChars)
        },
      ),
      runs(numRuns),
    )
  }
}

/** A Markdown file imported as a new document, as its fragment. */
function loadFile(file: string): Y.XmlFragment {
  const imported = expectOk(importMarkdown(readFileSync(file, 'utf8'), { fallbackTitle: 'File' }))
  const doc = new Y.Doc()
  Y.applyUpdate(doc, expectOk(importedDocumentUpdate(imported)))
  return doc.getXmlFragment(FRAGMENT_NAME)
}

/** Blocks far longer than a read's budget: a list of 120 items (emoji, bold) and 100 lines of code. */
export const LONG_BLOCKS = {
  list: Array.from({ length: 120 }, (_, i) => `- item ${i} 😀 with **bold** words`).join('\n'),
  code: `\`\`\`\n${'line of code\n'.repeat(100)}\`\`\``,
}

/** What a read shows of one section's blocks: `firstBlock` from `firstOffset`, `truncatedBlock` cut at `nextOffset`. */
type ShownPart = {
  firstBlock: number
  lastBlock: number
  firstOffset?: number | undefined
  truncatedBlock?: number | undefined
  nextOffset?: number | undefined
}

/** What reads showed of one section's blocks: per block number, the [from, to) ranges of its Markdown. */
export class BlocksShown {
  readonly ranges = new Map<number, Array<[number, number]>>()

  /** `markdown`: the blocks' Markdown, block 1 first. */
  constructor(readonly markdown: readonly string[]) {}

  /**
   * The text a read shows of `part`'s blocks, rebuilt from their Markdown: each block labelled, a part from
   * an offset with it, a cut one with its marker line. Each block's shown range, never empty, is recorded.
   */
  textOf(part: ShownPart): string {
    let text = ''
    for (let number = part.firstBlock; number <= part.lastBlock; number++) {
      const whole = this.markdown[number - 1]!
      const from = number === part.firstBlock ? (part.firstOffset ?? 0) : 0
      const to = number === part.truncatedBlock ? part.nextOffset! : whole.length
      expect(to).toBeGreaterThan(from)
      const label =
        from > 0 ? `[${number}, from character ${from}] ` : whole === '' ? `[${number}]` : `[${number}] `
      const marker = to < whole.length ? `\n[… block ${number} cut at character ${to} of its Markdown]` : ''
      text += `\n\n${label}${whole.slice(from, to)}${marker}`
      this.ranges.set(number, [...(this.ranges.get(number) ?? []), [from, to]])
    }
    return text
  }

  /** Every block's ranges tile its Markdown: from 0 to its end, each next one starting where the last ended. */
  expectTiled(): void {
    this.markdown.forEach((whole, i) => {
      let at = 0
      for (const [from, to] of this.ranges.get(i + 1) ?? []) {
        expect(from).toBe(at)
        at = to
      }
      expect(at).toBe(whole.length)
    })
  }
}

export const SAMPLE_MARKDOWN = `Intro paragraph with **bold**, *italic*, ~~strike~~, <u>underline</u>, <mark>highlight</mark>, H<sub>2</sub>O, x<sup>2</sup>, \`code\` and a [link](https://example.com "Example").

## Lists

- one
- two
  - nested

1. first
2. second

- [ ] todo
- [x] done

## Other blocks

> a quote

\`\`\`ts
const answer = 42
\`\`\`

---

| name | value |
| :--- | ----: |
| a \\| b | 1 |

![diagram](https://example.com/d.png "Diagram")

https://www.youtube.com/watch?v=dQw4w9WgXcQ

https://example.com/talk.mp3

### Deep

line one\\
line two
`

/** Unicode that breaks naive code: ZWJ emoji, CJK, RTL, combining marks, astral characters. */
export const UNICODE_WORDS = [
  '👩‍👩‍👧‍👦',
  '漢字かな',
  'שלום עולם',
  'مرحبا',
  'e\u0301',
  '𝔘𝔫𝔦',
  '🏳️‍🌈',
  'Å',
  '\u200f',
]
