/**
 * Seeded random Markdown files of the shapes an import maps (front matter, `#` titles and shifted headings,
 * reference links defined after their use, footnotes, lists nested, mixed and long, code fences, tables,
 * HTML blocks, quotes): import-parts.test.ts and import-state.test.ts build them both ways.
 */
import { pick } from './random-inline.ts'
import type { Rng } from './seeded-random.ts'

const INLINE = [
  'plain words',
  '**bold** and *em*',
  '`code` with <u>under</u>',
  'a [ref link][r1] and [another][r2]',
  'a footnote[^1] here',
  'https://example.com/bare',
  '![img](https://example.com/a.png)',
  '~~struck~~ <mark>marked</mark>',
  '[inline](https://example.com "title")',
  'line one  \nline two',
]

/** A random Markdown document of `blocks` top-level pieces, the shapes an import maps. */
export function randomDocument(rng: Rng, blocks: number): string {
  const parts: string[] = []
  if (rng() < 0.3) parts.push(rng() < 0.5 ? '---\ntitle: x\ntags: [a, b]\n---' : '+++\ntitle = "x"\n+++')
  if (rng() < 0.6) parts.push(`# ${pick(rng, INLINE)}`)
  for (let i = 0; i < blocks; i++) {
    const text = () => pick(rng, INLINE)
    const roll = rng()
    if (roll < 0.15) parts.push(`${'#'.repeat(1 + Math.floor(rng() * 6))} ${text()}`)
    else if (roll < 0.3) parts.push(`${text()} ${text()}`)
    else if (roll < 0.45) {
      const items = 1 + Math.floor(rng() * 40)
      const marker = pick(rng, ['-', '*', '1.'])
      const lines: string[] = []
      for (let n = 0; n < items; n++) {
        const task = rng() < 0.3 ? `[${rng() < 0.5 ? ' ' : 'x'}] ` : ''
        lines.push(`${marker} ${task}${text()}`)
        if (rng() < 0.2) lines.push(`   - nested ${text()}`)
        if (rng() < 0.1) lines.push('')
      }
      parts.push(lines.join('\n'))
    } else if (roll < 0.55)
      parts.push(`\`\`\`${pick(rng, ['', 'ts', 'md'])}\n${text()}\n\n# not a heading\n\`\`\``)
    else if (roll < 0.65) {
      const rows = 1 + Math.floor(rng() * 5)
      const table = ['| a | b |', '| :- | -: |']
      for (let r = 0; r < rows; r++) table.push(`| ${text()} | ${r} |`)
      parts.push(table.join('\n'))
    } else if (roll < 0.72)
      parts.push(
        pick(rng, [
          '<p align="center">\n  <b>logo</b>\n</p>',
          '<details>\n<summary>more</summary>\n\nhidden\n\n</details>',
        ]),
      )
    else if (roll < 0.8) parts.push(`> ${text()}\n>\n> - quoted item`)
    else if (roll < 0.87) parts.push(`[^1]: the note ${text()}`)
    else if (roll < 0.93) parts.push('***')
    else parts.push(`    indented code ${i}`)
  }
  // Reference definitions after their uses (a parse in parts must still resolve them).
  parts.push('[r1]: https://example.com/one\n[r2]: <https://example.com/two> "Two"')
  return `${parts.join('\n\n')}\n`
}
