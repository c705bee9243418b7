/**
 * Import → export → import over real files that `bun install` puts in node_modules (READMEs, CHANGELOGs,
 * HISTORY files and API docs, read in place: nothing is copied into the repository): every file is stable
 * on a second trip, its blocks come back (after the documented losses), and the export escapes no more than
 * the source did (issue 26: per file, at most 5% more backslash escapes).
 */
import { describe, expect, test } from 'bun:test'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import MarkdownIt from 'markdown-it'
import { CORPUS_PACKAGES, MODULES } from './corpus-files.ts'
import { exported } from './markdown-trips.ts'

/**
 * Files with issue 26's shapes, beside the shared corpus: `a@1.2.3` and `@~1.2` (HISTORY.md), `[**closed**]`
 * at a line start, HTML blocks in list items, balanced brackets in link text, `<br>` line ends, `0.2 * 3`,
 * bare `<list>` and `#<Object>` in the source.
 */
const ESCAPE_PACKAGES = [
  '@electric-sql/pglite-socket',
  'type-fest',
  'mime',
  'router',
  'find-my-way',
  'qs',
  'd3-time',
  'd3-array',
]

/** The shared corpus and ESCAPE_PACKAGES: every README, CHANGELOG and HISTORY file installed here. */
function corpusFiles(): string[] {
  const files: string[] = []
  for (const name of [...CORPUS_PACKAGES, ...ESCAPE_PACKAGES]) {
    const dir = join(MODULES, name)
    if (!existsSync(dir)) continue
    for (const entry of readdirSync(dir)) {
      if (/^(readme|changelog|history)\.md$/i.test(entry)) files.push(join(dir, entry))
    }
  }
  return files
}

const backslashes = (text: string) => text.match(/\\(?!\r?\n)/g)?.length ?? 0

/**
 * Bare tags the source left raw (`Promise<Result>`, `#<Object>`: no attributes, not opened and closed in
 * the same block): a renderer hides them, so the export owes each one `\<` the source did not have.
 */
function bareTags(markdown: string): number {
  let count = 0
  const visit = (tokens: ReturnType<typeof blockParser.parse>) => {
    for (const token of tokens) {
      if (token.type !== 'inline') continue
      const tags = (token.children ?? []).filter((child) => child.type === 'html_inline')
      const names = (closing: boolean) =>
        new Set(
          tags
            .filter((t) => t.content.startsWith('</') === closing)
            .map((t) => /^<\/?([\w-]+)/.exec(t.content)?.[1]?.toLowerCase()),
        )
      const [opened, closed] = [names(false), names(true)]
      for (const tag of tags) {
        const name = /^<\/?([A-Za-z][\w-]*)\s*\/?>$/.exec(tag.content)?.[1]?.toLowerCase()
        // `<br>` is a hard break, written back as `\` and a line break, not as an escaped tag.
        if (name && name !== 'br' && !(opened.has(name) && closed.has(name))) count++
      }
    }
  }
  visit(blockParser.parse(markdown, {}))
  return count
}

/**
 * Top-level blocks of a Markdown text as comparable keys (an mdast-style block comparison over markdown-it's
 * tree): each block rendered to HTML with whitespace collapsed, after the documented mapping and losses
 * (docs/document-model.md): heading levels ignored, an HTML block equal to an `html` code block with the
 * same text, `<br>` (`<br/>`) equal to a hard break, a cell's edge spaces trimmed, loose lists as tight ones,
 * and marks covering exactly the same text in one nesting order, headings included (`<a><strong>x</strong></a>`
 * as `<strong><a>x</a></strong>`).
 */
const blockParser = new MarkdownIt('default', { html: true, linkify: true })
blockParser.linkify.set({ fuzzyLink: false, fuzzyEmail: false, fuzzyIP: false })
function blockKeys(markdown: string): string[] {
  const tokens = blockParser.parse(markdown.replace(/^---\n[\s\S]*?\n---\n/, ''), {})
  const keys: string[] = []
  let start = 0
  let depth = 0
  tokens.forEach((token, index) => {
    depth += token.nesting
    if (depth !== 0) return
    const group = tokens.slice(start, index + 1)
    start = index + 1
    const first = group[0]!
    if (first.type === 'html_block') keys.push(`code:html:${first.content.trim()}`)
    else if (first.type === 'fence' || first.type === 'code_block')
      keys.push(`code:${first.info.trim().split(/\s+/)[0] || ''}:${first.content.trim()}`)
    else if (first.type === 'heading_open')
      keys.push(`h:${canonical(blockParser.renderer.render(group.slice(1, 2), {}, {}))}`)
    else keys.push(canonical(blockParser.renderer.render(group, blockParser.options, {})))
  })
  return keys
}

/** Rendered HTML with the documented losses applied (see blockKeys). */
function canonical(html: string): string {
  let text = html
    .replace(/\s+/g, ' ')
    .replace(/ ?<br ?\/?> ?/g, '<br>')
    .replace(/ <\/t([dh])>/g, '</t$1>')
    .trim()
  // Lists are written tight: a loose list's item paragraphs are not kept.
  if (/^<[ou]l>/.test(text))
    text = text
      .replace(/ *<\/?p> */g, ' ')
      .replace(/<li> /g, '<li>')
      .replace(/ <\/li>/g, '</li>')
  for (let before = ''; before !== text; ) {
    before = text
    text = text
      .replace(/<a ([^>]*)><(strong|em|s)>([^<]*)<\/\2><\/a>/g, '<$2><a $1>$3</a></$2>')
      .replace(/<strong><em>([^<]*)<\/em><\/strong>/g, '<em><strong>$1</strong></em>')
  }
  return text
}

/** Source blocks found unchanged in the export (as a multiset), and those that are not. */
function compareBlocks(source: string, exported: string) {
  const left = new Map<string, number>()
  for (const key of blockKeys(exported)) left.set(key, (left.get(key) ?? 0) + 1)
  const differ: string[] = []
  let same = 0
  for (const key of blockKeys(source)) {
    const n = left.get(key) ?? 0
    if (n > 0) {
      left.set(key, n - 1)
      same++
    } else differ.push(key)
  }
  return { same, differ }
}

describe('importMarkdown: real files', () => {
  const files = corpusFiles()

  test('the corpus holds at least 20 real files', () => {
    expect(files.length).toBeGreaterThanOrEqual(20)
  })

  test('every file imports, and import → export → import → export gives the first export again', () => {
    const unstable: string[] = []
    const noisy: string[] = []
    let source = 0
    let export1 = 0
    let same = 0
    let total = 0
    const report: string[] = []
    for (const file of files) {
      const text = readFileSync(file, 'utf8')
      const first = exported(text)
      const second = exported(first)
      if (second !== first) unstable.push(file)
      source += backslashes(text)
      export1 += backslashes(first)
      // Per file: at most 5% more escapes than the source, plus one per bare tag the source left raw.
      const limit = Math.floor(backslashes(text) * 1.05) + bareTags(text)
      if (backslashes(first) > limit)
        noisy.push(
          `${file.slice(MODULES.length + 1)}: ${backslashes(text)} escapes in the source, ${backslashes(first)} exported (limit ${limit})`,
        )
      const blocks = compareBlocks(text, first)
      same += blocks.same
      total += blocks.same + blocks.differ.length
      if (blocks.differ.length > 0) {
        const where = file.slice(MODULES.length + 1)
        report.push(
          `${where}: ${blocks.differ.length} of ${blocks.same + blocks.differ.length} blocks differ, e.g. ${blocks.differ[0]!.slice(0, 100)}`,
        )
      }
    }
    console.log(report.join('\n'))
    console.log(`corpus: ${same} of ${total} blocks identical (${((100 * same) / total).toFixed(1)}%)`)
    expect(unstable).toEqual([])
    // Escaping noise: the target, at most 5% more backslashes than the source, on each file.
    console.log(`corpus: ${files.length} files, backslashes ${source} in the sources, ${export1} exported`)
    expect(noisy).toEqual([])
    expect(export1).toBeLessThanOrEqual(Math.floor(source * 1.05))
    // Blocks identical after import → export (after the documented losses): the target, 99.5%.
    expect(same / total).toBeGreaterThanOrEqual(0.995)
  })
})
