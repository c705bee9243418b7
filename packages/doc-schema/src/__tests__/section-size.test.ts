/**
 * A section's size (`sectionStats`, kept in the outline and its memo): counted during the rev's hash walk,
 * it must stay close to what a read of the section shows, depend only on the content, and count what plain
 * text misses (a link's URL), so an agent choosing between a whole read and section reads is not misled.
 */
import { describe, expect, test } from 'bun:test'
import * as Y from 'yjs'
import { readOutline, renderSection } from '../index.ts'
import type { OutlineNode } from '../sections/outline.ts'
import { locateSections } from '../sections/section-index.ts'
import { sectionStats } from '../sections/section-rev.ts'
import { cloneDocument, loadDocument } from './fixtures.ts'
import { seededRandom } from './seeded-random.ts'

function flat(roots: readonly OutlineNode[]): OutlineNode[] {
  return roots.flatMap((node) => [node, ...flat(node.children)])
}

/** Deterministic Markdown of every kind a document holds: marks, links, lists, tables, code, quotes, media. */
function mixedMarkdown(seed: number, sections: number): string {
  const rng = seededRandom(seed)
  const word = () => ['alpha', 'beta', 'gamma', 'delta', 'release', 'outline'][Math.floor(rng() * 6)]!
  const words = (n: number) =>
    Array.from({ length: n }, () => {
      const w = word()
      const r = rng()
      if (r < 0.05) return `**${w}**`
      if (r < 0.08) return `*${w}*`
      if (r < 0.1) return `\`${w}\``
      if (r < 0.14) return `[${w}](https://example.com/${w}/${Math.floor(rng() * 1e6)})`
      if (r < 0.16) return `https://example.com/bare/${w}`
      return w
    }).join(' ')
  const blocks = [
    () => `${words(10 + Math.floor(rng() * 60))}.`,
    () =>
      Array.from({ length: 2 + Math.floor(rng() * 5) }, () => `- ${words(3 + Math.floor(rng() * 10))}`).join(
        '\n',
      ),
    () => Array.from({ length: 3 }, (_, i) => `${i + 1}. ${words(5)}\n   - ${words(4)}`).join('\n'),
    () =>
      `| ${words(2)} | ${words(2)} |\n| --- | --- |\n| ${words(3)} | ${words(1)} |\n| ${words(2)} | ${words(2)} |`,
    () => `\`\`\`ts\n${Array.from({ length: 4 }, (_, i) => `const v${i} = f(${i})`).join('\n')}\n\`\`\``,
    () => `> ${words(20)}`,
    () => `![a ${word()} picture](https://example.com/${word()}.png)`,
  ]
  const parts: string[] = []
  for (let s = 0; s < sections; s++) {
    parts.push(`${'#'.repeat(2 + Math.floor(rng() * 3))} ${words(3).replace(/[*`[\]()]/g, '')} ${s}`)
    for (let b = 2 + Math.floor(rng() * 6); b > 0; b--)
      parts.push(blocks[Math.floor(rng() * blocks.length)]!())
  }
  return parts.join('\n\n')
}

/** The length of what a read of one section shows (no budget in the way). */
function shownLength(fragment: Y.XmlFragment, sectionId: string): number {
  const read = renderSection(fragment, sectionId, { maxChars: Number.MAX_SAFE_INTEGER })
  if (read.kind === 'error') throw new Error(read.message)
  return read.value.text.length
}

describe('section size', () => {
  test('is close to what a section read shows: each section within 20%, the document within 5%', () => {
    for (const seed of [1, 2, 3]) {
      const { fragment } = loadDocument('Mixed', mixedMarkdown(seed, 40))
      let estimated = 0
      let shown = 0
      for (const node of flat(readOutline(fragment))) {
        const length = shownLength(fragment, node.sectionId)
        estimated += node.size
        shown += length
        if (length >= 300) {
          const off = Math.abs(node.size / length - 1)
          expect(off, `seed ${seed}, "${node.title}": ${node.size} for ${length}`).toBeLessThanOrEqual(0.2)
        }
      }
      expect(Math.abs(estimated / shown - 1)).toBeLessThanOrEqual(0.05)
    }
  })

  test("counts a link's URL, which plain text leaves out, and a bare URL once", () => {
    const url = `https://example.com/${'long/'.repeat(40)}page`
    const linked = loadDocument('Links', `## Linked\n\nsee [docs](${url}) now`).fragment
    const plain = loadDocument('Links', '## Linked\n\nsee docs now').fragment
    const bare = loadDocument('Links', `## Linked\n\nsee ${url} now`).fragment
    const sizeOf = (f: Y.XmlFragment) => flat(readOutline(f))[1]!.size
    expect(sizeOf(linked) - sizeOf(plain)).toBeGreaterThanOrEqual(url.length)
    expect(sizeOf(bare)).toBeLessThan(sizeOf(linked))
    for (const f of [linked, plain, bare]) {
      const id = flat(readOutline(f))[1]!.sectionId
      expect(Math.abs(sizeOf(f) / shownLength(f, id) - 1)).toBeLessThanOrEqual(0.2)
    }
  })

  test('depends only on the content: the same for text typed in pieces, formatting undone, and a decoded copy', () => {
    const once = loadDocument('Typed', '## Part\n\nhello world')
    const pieces = loadDocument('Typed', '## Part\n\n')
    const paragraph = new Y.XmlElement('paragraph')
    const text = new Y.XmlText()
    paragraph.insert(0, [text])
    pieces.doc.transact(() => pieces.fragment.insert(pieces.fragment.length, [paragraph]))
    for (const [i, ch] of [...'hello world'].entries()) text.insert(i, ch)
    text.format(0, 5, { bold: true })
    text.format(0, 5, { bold: null })
    const sizes = (f: Y.XmlFragment) => locateSections(f).map((s) => sectionStats(s.heading, s.blocks).size)
    expect(sizes(pieces.fragment).slice(1)).toEqual(sizes(once.fragment).slice(1))
    expect(sizes(cloneDocument(pieces.doc).fragment)).toEqual(sizes(pieces.fragment))
  })
})
