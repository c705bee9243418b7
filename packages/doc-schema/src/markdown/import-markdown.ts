/**
 * A person's Markdown file as a new document (`doc import`, `POST /api/documents`): any size up to
 * MAX_IMPORT_BYTES, several `# ` headings, front matter and HTML included. Agents' writes keep the stricter
 * parseMarkdown (MAX_MARKDOWN_CHARS, no level-1 headings).
 *
 * The mapping, applied the same way every time:
 * - Title: `title` when given (then the first level-1 heading is left out of the body if its text is the
 *   same); otherwise the text of the first level-1 heading (left out of the body); otherwise `fallbackTitle`.
 * - When the body still holds a level-1 heading, every body heading moves one level deeper (`#` → `##`,
 *   … `#####` → `######`); `######` stays `######`, so levels 5 and 6 of such a file both read back as 6.
 * - YAML (`---`) or TOML (`+++`) front matter at the top becomes the first block: a code block with
 *   language `yaml` or `toml` holding it verbatim (the schema has no metadata node; a code block keeps every
 *   character and exports back as a fenced block).
 * - An HTML block (a logo `<p align="center">…`, `<details>`) at the top level becomes a code block with
 *   language `html` holding it verbatim (the schema has no raw HTML node); inside a list item or a quote it
 *   is a paragraph of its lines (tokens-to-blocks.ts), written back as the HTML block (html-in-text.ts).
 * - Bare URLs become links; link targets are kept as written (see the parser below).
 * - A bullet list mixing task and plain items becomes consecutive lists, one per kind (tokens-to-blocks.ts).
 */
import type { Node as PMNode } from '@tiptap/pm/model'
import MarkdownIt from 'markdown-it'
import type Token from 'markdown-it/lib/token.mjs'
import type { DocNode } from '../doc-json.ts'
import { newHeadingId } from '../heading-id.ts'
import { HEADING_ID_ATTR, MAX_IMPORT_BYTES, MAX_IMPORT_ELEMENTS } from '../limits.ts'
import { ok, type Result, refuseFor } from '../result.ts'
import { footnoteDefinitions } from './footnotes.ts'
import { convertInline } from './inline-tokens.ts'
import { countTokens, parseCounted } from './markdown-work.ts'
import { checkNodes } from './parse-markdown.ts'
import { tokensToBlocks } from './tokens-to-blocks.ts'

// linkify: a bare `https://…` or `mailto:` URL in a file is a link (a GFM autolink), written back as
// `<https://…>`; fuzzy forms (`example.com`, `a@b.c`) stay text. Link targets are kept as written (markdown-it
// would percent-encode `^` or `–`); validateLink still refuses `javascript:` and other unsafe schemes.
const markdownIt = new MarkdownIt('default', { html: true, linkify: true, typographer: false })
markdownIt.linkify.set({ fuzzyLink: false, fuzzyEmail: false, fuzzyIP: false })
markdownIt.normalizeLink = (url) => url
markdownIt.use(footnoteDefinitions)
countTokens(markdownIt)

export type ImportedMarkdown = {
  title: string
  /** The body's top-level blocks, checked, each heading with a fresh id (the title heading not included). */
  blocks: DocNode[]
  /** One line per change the mapping made, for the person importing (empty when nothing changed). */
  changes: string[]
}

const FRONT_MATTER =
  /^(?:(---)[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*|(\+\+\+)[ \t]*\r?\n([\s\S]*?)\r?\n\+\+\+[ \t]*)(?:\r?\n|$)/

/** Splits front matter (YAML `---` or TOML `+++`, first line of the file) from the rest. */
function splitFrontMatter(text: string) {
  const match = FRONT_MATTER.exec(text)
  if (!match) return { frontMatter: null, rest: text, lineOffset: 0 }
  const language = match[1] ? 'yaml' : 'toml'
  const content = (match[2] ?? match[4] ?? '').replace(/\r\n/g, '\n')
  const lineOffset = match[0].split('\n').length - (match[0].endsWith('\n') ? 1 : 0)
  return { frontMatter: { language, content }, rest: text.slice(match[0].length), lineOffset }
}

/** Top-level token groups (one block each) with the 1-based line where each starts. */
function topLevelGroups(tokens: Token[]): { tokens: Token[]; line: number }[] {
  const groups: { tokens: Token[]; line: number }[] = []
  let start = 0
  let depth = 0
  for (let i = 0; i < tokens.length; i++) {
    depth += tokens[i]!.nesting
    if (depth === 0) {
      const first = tokens[start]!
      groups.push({ tokens: tokens.slice(start, i + 1), line: (first.map?.[0] ?? 0) + 1 })
      start = i + 1
    }
  }
  return groups
}

/**
 * A heading's text as the document holds it (marks and the mark tags `<sup>`… dropped, an image's alt kept,
 * line breaks as spaces), whitespace runs collapsed: the title, which is text.
 */
const inlineText = (tokens: Token[]) =>
  convertInline(tokens[1]?.children ?? [])
    .map(({ node }) =>
      node.type === 'text' ? (node.text ?? '') : node.type === 'image' ? (node.attrs?.alt ?? '') : ' ',
    )
    .join('')
    .replace(/\s+/g, ' ')
    .trim()

/**
 * Imports a Markdown file. Refusals: `too_large` (over MAX_IMPORT_BYTES), `too_complex` (over
 * MAX_IMPORT_ELEMENTS, MAX_TABLE_CELLS or MAX_MARKDOWN_EXPANSION_CHARS, counted while it is read),
 * `empty_title` when there is no title at all, `invalid_content` naming the line of the block at fault.
 * The body's blocks all at once; `importMarkdownParts` gives them one top-level block at a time.
 */
export function importMarkdown(
  markdown: string,
  opts: { title?: string; fallbackTitle: string },
): Result<ImportedMarkdown> {
  const imported = importMarkdownParts(markdown, opts)
  if (imported.kind === 'error') return imported
  const blocks: DocNode[] = []
  for (const part of imported.value.parts) {
    if (part.kind === 'error') return part
    for (const node of part.value) blocks.push(node.toJSON() as DocNode)
  }
  return ok({ title: imported.value.title, blocks, changes: imported.value.changes })
}

/** An import whose body is converted as it is read (`importMarkdownParts`). */
export type ImportedMarkdownParts = Omit<ImportedMarkdown, 'blocks'> & {
  /**
   * The body's checked blocks as ProseMirror nodes (their JSON is `blocks`), one top-level Markdown block
   * at a time (a front matter, a list, a heading…), each heading with a fresh id; an `invalid_content`
   * refusal ends it. Read once: each block's tokens are let go as soon as it is converted, so a caller that
   * builds each part into the document (and lets go of it) never holds the whole file's tokens, blocks and
   * Yjs at once.
   */
  parts: Iterable<Result<PMNode[]>>
}

/**
 * `importMarkdown` with the body converted lazily. The parse, the title, the heading shift and every ceiling
 * are decided here, before any part is converted; the changes are complete at once.
 */
export function importMarkdownParts(
  markdown: string,
  opts: { title?: string; fallbackTitle: string },
): Result<ImportedMarkdownParts> {
  const bytes = Buffer.byteLength(markdown, 'utf8')
  if (bytes > MAX_IMPORT_BYTES) {
    return refuseFor(
      'too_large',
      `markdown: ${bytes} bytes is over the import limit of ${MAX_IMPORT_BYTES} bytes (${MAX_IMPORT_BYTES / 1024 / 1024} MiB); split the file into several documents.`,
      'markdown',
    )
  }
  const text = markdown.replace(/^\uFEFF/, '')
  const { frontMatter, rest, lineOffset } = splitFrontMatter(text)
  const changes: string[] = []
  const tokens = parseCounted(markdownIt, rest, { elements: MAX_IMPORT_ELEMENTS, scope: 'one import' })
  if (tokens.kind === 'error') return tokens
  // The groups are copies of their tokens' slices: the whole stream is let go here, each group once converted.
  const groups: ({ tokens: Token[]; line: number } | undefined)[] = topLevelGroups(tokens.value)
  tokens.value = []

  const isH1 = (group: { tokens: Token[] } | undefined) =>
    group?.tokens[0]?.type === 'heading_open' && group.tokens[0].tag === 'h1'
  const firstH1 = groups.findIndex(isH1)
  let title = opts.title?.replace(/\s+/g, ' ').trim() ?? ''
  let dropped = -1
  if (title) {
    if (firstH1 !== -1 && inlineText(groups[firstH1]!.tokens) === title) dropped = firstH1
  } else if (firstH1 !== -1 && inlineText(groups[firstH1]!.tokens) !== '') {
    title = inlineText(groups[firstH1]!.tokens)
    dropped = firstH1
  } else {
    title = opts.fallbackTitle.replace(/\s+/g, ' ').trim()
  }
  if (!title) return refuseFor('empty_title', 'title: the file has no `# ` heading; give --title.', 'title')
  if (dropped !== -1) groups[dropped] = undefined

  const shift = groups.some(isH1)
  if (shift) {
    let capped = 0
    for (const group of groups) {
      const open = group?.tokens[0]
      if (open?.type !== 'heading_open') continue
      const level = Number(open.tag.slice(1))
      if (level === 6) capped++
      const next = `h${Math.min(6, level + 1)}`
      open.tag = next
      group!.tokens.at(-1)!.tag = next
    }
    changes.push(
      `headings: the body holds level-1 headings, so every body heading moved one level deeper (# → ##, …, ##### → ######)${capped ? `; ${capped} level-6 heading(s) stayed at level 6` : ''}`,
    )
  }

  if (frontMatter) changes.push(`front matter: kept as a \`${frontMatter.language}\` code block at the top`)
  const htmlBlocks = groups.filter((group) => group?.tokens[0]?.type === 'html_block').length
  if (htmlBlocks) changes.push(`HTML: ${htmlBlocks} HTML block(s) kept verbatim as \`html\` code blocks`)
  return ok({ title, changes, parts: convertGroups(groups, frontMatter, lineOffset) })
}

/** The body's groups converted and checked one at a time, each let go once converted. */
function* convertGroups(
  groups: ({ tokens: Token[]; line: number } | undefined)[],
  frontMatter: { language: string; content: string } | null,
  lineOffset: number,
): Generator<Result<PMNode[]>, void, undefined> {
  if (frontMatter) yield checkNodes([codeBlock(frontMatter.language, frontMatter.content)])
  for (let i = 0; i < groups.length; i++) {
    const group = groups[i]
    if (!group) continue
    groups[i] = undefined
    const line = group.line + lineOffset
    const open = group.tokens[0]!
    const converted =
      open.type === 'html_block'
        ? [codeBlock('html', open.content.replace(/\n+$/, ''))]
        : tokensToBlocks(group.tokens, { splitMixedLists: true, release: true })
    for (const block of converted) {
      if (block.type === 'heading') block.attrs = { ...block.attrs, [HEADING_ID_ATTR]: newHeadingId() }
    }
    const checked = checkNodes(converted)
    if (checked.kind === 'error') {
      yield refuseFor(
        'invalid_content',
        `markdown: line ${line}: ${checked.message.replace(/^markdown: /, '')}`,
        'markdown',
      )
      return
    }
    yield checked
  }
}

function codeBlock(language: string, text: string): DocNode {
  return { type: 'codeBlock', attrs: { language }, content: text ? [{ type: 'text', text }] : [] }
}
