/**
 * The phrasing writer's differential (phrasing-writer.test.ts, phrasing-writer-random.slow.test.ts): the
 * library's writer (`phrasing: 'library'`) and ours over the same content, and seeded random inline content
 * (random-inline.ts) in every place inline content is written from, each seed's bytes compared.
 */
import { expect } from 'bun:test'
import type { DocNode } from '../doc-json.ts'
import type { SerializeOptions } from '../markdown/blocks-to-mdast.ts'
import { blocksToMarkdown, blocksToMarkdownPrefix } from '../markdown/serialize-markdown.ts'
import { inContext, randomInline } from './random-inline.ts'
import { seededRandom } from './seeded-random.ts'

/**
 * Where ours departs from the library on purpose, about the characters beside attention's markers
 * (attention-markers.ts), after which the library's output reads back as other emphasis or none:
 * - ours classifies them by code point, the library by UTF-16 unit, so next to an emoji (a symbol, which
 *   CommonMark counts as punctuation) the library took a letter and wrote `b**😀b**` for strong text that
 *   reads back as none. The random contents compared here have each character outside the Basic
 *   Multilingual Plane replaced by `©` (a symbol there too), where both classify alike (`bmpOnly`).
 * - ours escapes a run of `*`, `_` or `~` that a character reference now touches (`**&#x20;\\* a**`, the
 *   library `**&#x20;* a**`): those backslashes are taken out of both sides before they are compared.
 * A setext heading's underline (as long as the line above it) is compared by its character. Every other
 * byte must agree; that the departures are right is the round-trip tests' to show
 * (markdown-roundtrip.test.ts).
 */
const RUN_BESIDE_REFERENCE = /(?<=&#x[0-9A-F]+;)(?:\\[*_~])+|(?:\\[*_~])+(?=&#x[0-9A-F]+;)/g
const UNDERLINE = /^(=|-)\1*$/gm
const ASTRAL = /[\u{10000}-\u{10FFFF}]/gu

function asTheLibraryMeans<T>(value: T): T {
  if (typeof value === 'string')
    return value
      .replace(RUN_BESIDE_REFERENCE, (run) => run.replaceAll('\\', ''))
      .replace(UNDERLINE, '$1$1$1') as T
  if (Array.isArray(value)) return value.map(asTheLibraryMeans) as T
  if (value && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value).map(([key, field]) => [key, asTheLibraryMeans(field)]),
    ) as T
  return value
}

/** `inline` with every character outside the Basic Multilingual Plane as `©` (see above). */
function bmpOnly(inline: DocNode[]): DocNode[] {
  return inline.map((node) => (node.text ? { ...node, text: node.text.replace(ASTRAL, '©') } : node))
}

/** Both writers' output of `render` (compared as `asTheLibraryMeans` says), with ours's fallbacks. */
export function both<T>(render: (phrasing: SerializeOptions['phrasing']) => T): {
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
  return {
    library: asTheLibraryMeans(attempt('library')),
    ours: asTheLibraryMeans(attempt({ fallbacks })),
    fallbacks,
  }
}

/**
 * Seeds `first`..`last`: random inline content in a random place, written whole (plain and with
 * suggestions shown) and as a bounded read by both writers, which must agree byte for byte. Returns why
 * ours left a container to the library, one entry a time it did.
 */
export function randomContentsAgree(first: number, last: number): string[] {
  const reasons: string[] = []
  for (let seed = first; seed <= last; seed++) {
    const rng = seededRandom(seed)
    const blocks = inContext(rng, bmpOnly(randomInline(rng)))
    for (const view of [{}, { suggestions: 'show' } as const]) {
      const out = both((phrasing) => blocksToMarkdown(blocks, { ...view, phrasing }))
      expect(out.ours, `seed ${seed} ${JSON.stringify(view)}`).toBe(out.library)
      reasons.push(...out.fallbacks)
    }
    // A bounded read writes the same start (its own root handler).
    const cut = both((phrasing) => blocksToMarkdownPrefix(blocks, 40, { phrasing }))
    expect(cut.ours, `seed ${seed} prefix`).toEqual(cut.library)
  }
  return reasons
}

/**
 * Seeds `first`..`last` without empty text runs (content as Yjs holds it): both writers must agree; returns
 * ours's fallbacks (there should be none).
 */
export function contentsWithoutEmptyRunsAgree(first: number, last: number): string[] {
  const reasons: string[] = []
  for (let seed = first; seed <= last; seed++) {
    const rng = seededRandom(seed)
    const inline = bmpOnly(randomInline(rng)).filter((node) => node.type !== 'text' || node.text !== '')
    const blocks = inContext(rng, inline)
    const out = both((phrasing) => blocksToMarkdown(blocks, { suggestions: 'show', phrasing }))
    expect(out.ours, `seed ${seed}`).toBe(out.library)
    reasons.push(...out.fallbacks)
  }
  return reasons
}

/** The one reason ours may leave inline content to the library. */
export const PAIRING_FALLBACK = 'attention markers that do not pair as first guessed'
