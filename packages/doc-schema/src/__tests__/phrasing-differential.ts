/**
 * The phrasing writer's differential (phrasing-writer.test.ts, phrasing-writer-random.slow.test.ts): the
 * library's writer (`phrasing: 'library'`) and ours over the same content, and seeded random inline content
 * (random-inline.ts) in every place inline content is written from, each seed's bytes compared.
 */
import { expect } from 'bun:test'
import type { SerializeOptions } from '../markdown/blocks-to-mdast.ts'
import { blocksToMarkdown, blocksToMarkdownPrefix } from '../markdown/serialize-markdown.ts'
import { inContext, randomInline } from './random-inline.ts'
import { seededRandom } from './seeded-random.ts'

/**
 * Where ours departs from the library on purpose: a run of `*`, `_` or `~` beside a character reference
 * that attention made is escaped by ours (attention-markers.ts, `escapeRunAtEdge`) and left bare by the
 * library, whose output then reads back as other emphasis (`**&#x20;* a**`). Those backslashes are taken out
 * of both sides before they are compared, and a setext heading's underline (as long as the line above it,
 * so one longer for each) is compared by its character: every other byte must still agree.
 */
const RUN_BESIDE_REFERENCE = /(?<=&#x[0-9A-F]+;)(?:\\[*_~])+|(?:\\[*_~])+(?=&#x[0-9A-F]+;)/g
const UNDERLINE = /^(=|-)\1*$/gm

function withoutEscapesBesideReferences<T>(value: T): T {
  if (typeof value === 'string')
    return value
      .replace(RUN_BESIDE_REFERENCE, (run) => run.replaceAll('\\', ''))
      .replace(UNDERLINE, '$1$1$1') as T
  if (Array.isArray(value)) return value.map(withoutEscapesBesideReferences) as T
  if (value && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value).map(([key, field]) => [key, withoutEscapesBesideReferences(field)]),
    ) as T
  return value
}

/** Both writers' output of `render` (see `withoutEscapesBesideReferences`), with ours's fallbacks. */
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
    library: withoutEscapesBesideReferences(attempt('library')),
    ours: withoutEscapesBesideReferences(attempt({ fallbacks })),
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
    const inline = randomInline(rng).filter((node) => node.type !== 'text' || node.text !== '')
    const blocks = inContext(rng, inline)
    const out = both((phrasing) => blocksToMarkdown(blocks, { suggestions: 'show', phrasing }))
    expect(out.ours, `seed ${seed}`).toBe(out.library)
    reasons.push(...out.fallbacks)
  }
  return reasons
}

/** The one reason ours may leave inline content to the library. */
export const PAIRING_FALLBACK = 'attention markers that do not pair as first guessed'
