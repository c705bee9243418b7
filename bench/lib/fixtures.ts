/**
 * Deterministic documents (fixed seed, fixed Yjs client id, ids from the seed): Markdown generated with a
 * realistic mix — a heading every ~5 blocks, paragraphs with marks, lists, tables, code — parsed by
 * doc-schema and built into the fragment in chunks until the encoded state reaches the target size.
 */
import { FRAGMENT_NAME, HEADING_ID_ATTR, parseMarkdown } from '@collab/doc-schema'
import { blocksToY } from '../../packages/doc-schema/src/yjs/build-y.ts'
import { Y, type YDoc } from '../deps.ts'
import { between, pick, prng, progress, type Rng } from './stats.ts'

const WORDS = (
  'the of and to in is that for it as was with be by on not he this are or his from at which but have an ' +
  'they you were her she there been one all we their has would when if so no will more other about into ' +
  'document section outline editor agent block heading table list code review draft release plan budget ' +
  'latency throughput server client update state merge sync offline cursor version owner search index'
).split(' ')

function words(rng: Rng, n: number): string {
  const out: string[] = []
  for (let i = 0; i < n; i++) {
    let w = pick(rng, WORDS)
    const r = rng()
    if (r < 0.03) w = `**${w}**`
    else if (r < 0.05) w = `*${w}*`
    else if (r < 0.06) w = `\`${w}\``
    else if (r < 0.065) w = `[${w}](https://example.com/${w})`
    out.push(w)
  }
  const s = out.join(' ')
  return s.charAt(0).toUpperCase() + s.slice(1)
}

function block(rng: Rng): string {
  const r = rng()
  if (r < 0.55) return `${words(rng, between(rng, 15, 70))}.`
  if (r < 0.7) {
    const marker = rng() < 0.5 ? '-' : '1.'
    return Array.from(
      { length: between(rng, 2, 6) },
      () => `${marker} ${words(rng, between(rng, 3, 14))}`,
    ).join('\n')
  }
  if (r < 0.8) {
    const cols = between(rng, 2, 4)
    const row = () => `| ${Array.from({ length: cols }, () => words(rng, between(rng, 1, 4))).join(' | ')} |`
    const sep = `| ${Array.from({ length: cols }, () => '---').join(' | ')} |`
    return [row(), sep, ...Array.from({ length: between(rng, 2, 6) }, row)].join('\n')
  }
  if (r < 0.9) {
    const lines = Array.from(
      { length: between(rng, 3, 12) },
      (_, i) => `const v${i} = compute(${i}, "${pick(rng, WORDS)}")`,
    )
    return `\`\`\`ts\n${lines.join('\n')}\n\`\`\``
  }
  return `> ${words(rng, between(rng, 10, 30))}.`
}

const ID_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
/** A well-formed heading id (HEADING_ID_LENGTH characters of the id alphabet), from `rng`. */
export const headingId = (rng: Rng) =>
  Array.from({ length: 16 }, () => ID_ALPHABET[Math.floor(rng() * 64)]).join('')

/** Markdown of `sections` sections (headings at levels 2–4, ~5 blocks each). */
function chunkMarkdown(rng: Rng, sections: number, index: number): string {
  const parts: string[] = []
  for (let s = 0; s < sections; s++) {
    const level = s === 0 ? 2 : between(rng, 2, 4)
    parts.push(
      `${'#'.repeat(level)} ${words(rng, between(rng, 2, 7)).replace(/[*`[\]()]/g, '')} ${index}.${s}`,
    )
    for (let b = between(rng, 3, 7); b > 0; b--) parts.push(block(rng))
  }
  return parts.join('\n\n')
}

export type Fixture = {
  name: string
  /** The encoded state (`Y.encodeStateAsUpdate`): what the store holds. */
  state: Uint8Array
  blocks: number
  headings: number
  /** A section id near the middle of the document. */
  middleSectionId: string
  /** Characters of the Markdown the document was built from (its title and chunks, blank lines between). */
  chars: number
  /** Markdown of the whole document as written (for building other stores). */
}

/**
 * A document of about `target` bytes of encoded Yjs state (or, with `unit: 'chars'`, characters of
 * Markdown, to the nearest chunk), the same bytes for the same seed. Built chunk by chunk from one seeded generator, a smaller
 * document of the same seed is the start of a larger one.
 */
export function buildFixture(
  name: string,
  target: number,
  seed = 42,
  unit: 'bytes' | 'chars' = 'bytes',
): Fixture {
  const rng = prng(seed)
  const doc: YDoc = new Y.Doc()
  doc.clientID = 1
  const fragment = doc.getXmlFragment(FRAGMENT_NAME)
  const title = parseMarkdown(`# Benchmark ${name}`, { allowTitle: true })
  if (title.kind === 'error') throw new Error(title.message)
  const insert = (markdown: string) => {
    const parsed = parseMarkdown(markdown)
    if (parsed.kind === 'error') throw new Error(parsed.message)
    for (const node of parsed.value)
      if (node.type === 'heading') node.attrs = { ...node.attrs, [HEADING_ID_ATTR]: headingId(rng) }
    return blocksToY(parsed.value)
  }
  for (const node of title.value)
    if (node.type === 'heading') node.attrs = { ...node.attrs, [HEADING_ID_ATTR]: headingId(rng) }
  doc.transact(() => fragment.insert(0, blocksToY(title.value)))
  let chars = `# Benchmark ${name}`.length
  let size = 0
  let chunk = 0
  const reached = () => (unit === 'chars' ? chars : size)
  progress(`fixture ${name}`, 0, target)
  let perChunk = 0
  let unchecked = 0
  while (reached() < target) {
    const markdown = chunkMarkdown(rng, 4, chunk++)
    // By characters, the chunk that ends nearest the target is the last (a chunk is ~4,700 characters).
    if (unit === 'chars' && chunk > 1 && chars + 2 + markdown.length - target > target - chars) break
    chars += 2 + markdown.length
    const elements = insert(markdown)
    doc.transact(() => fragment.insert(fragment.length, elements))
    if (unit === 'chars') {
      progress(`fixture ${name}`, Math.min(chars, target), target)
      continue
    }
    unchecked++
    // Encoding the whole state per chunk would be quadratic: measure when halfway to the target by estimate.
    if (perChunk === 0 || unchecked * perChunk >= (target - size) / 2) {
      const measured = Y.encodeStateAsUpdate(doc).length
      perChunk = (measured - size) / unchecked || perChunk
      size = measured
      unchecked = 0
      progress(`fixture ${name}`, Math.min(size, target), target)
    }
  }
  const state = Y.encodeStateAsUpdate(doc)
  const children = fragment.toArray() as Array<{ nodeName?: string; getAttribute?: (k: string) => unknown }>
  const headings = children.filter((c) => c.nodeName === 'heading')
  const middle = headings[Math.floor(headings.length / 2)]
  const middleSectionId = String(middle?.getAttribute?.(HEADING_ID_ATTR) ?? '')
  doc.destroy()
  return { name, state, blocks: children.length, headings: headings.length, middleSectionId, chars }
}
