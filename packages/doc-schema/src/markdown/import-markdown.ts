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
import type MarkdownIt from 'markdown-it'
import type Token from 'markdown-it/lib/token.mjs'
import type { DocNode } from '../doc-json.ts'
import { newHeadingId } from '../heading-id.ts'
import { BUILD_BATCH_CHILDREN, type ImportPart } from '../insert-blocks.ts'
import { editorSchema, prosemirrorModel } from '../lazy-libs.ts'
import { HEADING_ID_ATTR, MAX_IMPORT_BYTES, MAX_IMPORT_ELEMENTS } from '../limits.ts'
import { ok, type Result, refuseFor } from '../result.ts'
import { importParser, scanBlocks } from './import-blocks.ts'
import { convertInline } from './inline-tokens.ts'
import { MarkdownTooComplex, MarkdownWork, parseCounted } from './markdown-work.ts'
import { checkNodes } from './parse-markdown.ts'
import { listItemsOfTokens, tokensToBlocks } from './tokens-to-blocks.ts'

/** The one parse of a whole file (`parse: 'whole'`: the reading before blocks were read apart). */
let wholeParser: MarkdownIt | undefined

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
  opts: { title?: string; fallbackTitle: string; parse?: 'scan' | 'whole' },
): Result<ImportedMarkdown> {
  const imported = importMarkdownParts(markdown, opts)
  if (imported.kind === 'error') return imported
  const blocks: DocNode[] = []
  let items: PMNode[] = []
  for (const part of imported.value.parts) {
    if (part.kind === 'error') return part
    if (Array.isArray(part.value)) {
      for (const node of part.value) blocks.push(node.toJSON() as DocNode)
      continue
    }
    items.push(...part.value.items)
    if (!part.value.last) continue
    blocks.push(part.value.list.copy(prosemirrorModel().Fragment.fromArray(items)).toJSON() as DocNode)
    items = []
  }
  return ok({ title: imported.value.title, blocks, changes: imported.value.changes })
}

/** An import whose body is converted as it is read (`importMarkdownParts`). */
export type ImportedMarkdownParts = Omit<ImportedMarkdown, 'blocks'> & {
  /**
   * The body's checked blocks as ProseMirror nodes (their JSON is `blocks`), one top-level Markdown block
   * at a time (a front matter, a list, a heading…), each heading with a fresh id; a list of more than
   * LIST_SLICE_ITEMS items is read in slices, and each of its document lists of more than
   * BUILD_BATCH_CHILDREN items comes as pieces of BUILD_BATCH_CHILDREN items (`ListPiece`); an
   * `invalid_content` or `too_complex` refusal ends it. Read once: each block is read (tokenised) only
   * when it is its turn and its tokens are let go as soon as it is converted, so a caller that builds each
   * part into the document (and lets go of it) never holds the whole file's tokens, blocks and Yjs at once.
   */
  parts: Iterable<Result<ImportPart>>
}

/**
 * `importMarkdown` with the body converted lazily. The file is scanned first (import-blocks.ts): its
 * top-level blocks and every block-level ceiling (elements, table cells) are decided here, and the title,
 * the heading shift and the changes, before any part is converted; each block's inline content is read (and
 * counted: elements, link expansion) when the block's turn comes, so a ceiling crossed there ends the parts
 * with its refusal, at the same count as one parse of the file. `parse: 'whole'` reads the file in one
 * markdown-it parse, as before the scan (the tests' reference; the same parts, byte for byte).
 */
export function importMarkdownParts(
  markdown: string,
  opts: { title?: string; fallbackTitle: string; parse?: 'scan' | 'whole' },
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
  const read = opts.parse === 'whole' ? wholeBody(rest) : scannedBody(rest)
  if (read.kind === 'error') return read
  const body = read.value
  const { blocks } = body

  const isH1 = (block: BodyBlock | undefined) => block?.type === 'heading_open' && block.tag === 'h1'
  const firstH1 = blocks.findIndex(isH1)
  let titleTokens: Token[] | undefined
  if (firstH1 !== -1) {
    const tokens = body.tokens(firstH1)
    if (tokens.kind === 'error') return tokens
    titleTokens = tokens.value
  }
  let title = opts.title?.replace(/\s+/g, ' ').trim() ?? ''
  let dropped = -1
  if (title) {
    if (titleTokens && inlineText(titleTokens) === title) dropped = firstH1
  } else if (titleTokens && inlineText(titleTokens) !== '') {
    title = inlineText(titleTokens)
    dropped = firstH1
  } else {
    title = opts.fallbackTitle.replace(/\s+/g, ' ').trim()
  }
  if (!title) return refuseFor('empty_title', 'title: the file has no `# ` heading; give --title.', 'title')

  const shift = blocks.some((block, index) => index !== dropped && isH1(block))
  if (shift) {
    let capped = 0
    for (const [index, block] of blocks.entries())
      if (index !== dropped && block.type === 'heading_open' && block.tag === 'h6') capped++
    changes.push(
      `headings: the body holds level-1 headings, so every body heading moved one level deeper (# → ##, …, ##### → ######)${capped ? `; ${capped} level-6 heading(s) stayed at level 6` : ''}`,
    )
  }

  if (frontMatter) changes.push(`front matter: kept as a \`${frontMatter.language}\` code block at the top`)
  const htmlBlocks = blocks.filter((block) => block.type === 'html_block').length
  if (htmlBlocks) changes.push(`HTML: ${htmlBlocks} HTML block(s) kept verbatim as \`html\` code blocks`)
  const first = dropped === -1 && titleTokens ? { index: firstH1, tokens: titleTokens } : undefined
  return ok({
    title,
    changes,
    parts: convertBody(body, { dropped, shift, first }, frontMatter, lineOffset),
  })
}

/** A top-level block of the body: its first line (1-based) and its first token's type and tag. */
type BodyBlock = { line: number; type: string; tag: string }

/** A file's body read block by block: a block's tokens (read now) and a long list's slices. */
type Body = {
  blocks: BodyBlock[]
  /** A block's tokens, inline ones included; `too_complex` when a ceiling is crossed reading them. */
  tokens(index: number): Result<Token[]>
  /** How many slices a long list is read in (0: the block is read whole). */
  slices(index: number): number
  sliceTokens(index: number, slice: number): Result<Token[]>
}

/** A read that may cross a ceiling, as a refusal. */
function counted<T>(read: () => T): Result<T> {
  try {
    return ok(read())
  } catch (error) {
    if (error instanceof MarkdownTooComplex) return refuseFor('too_complex', error.message, 'markdown')
    throw error
  }
}

/** The body scanned, each block read when asked (import-blocks.ts). */
function scannedBody(source: string): Result<Body> {
  const env = {
    work: new MarkdownWork({ elements: MAX_IMPORT_ELEMENTS, scope: 'one import' }, source.length),
  }
  const scanned = counted(() => scanBlocks(source, env))
  if (scanned.kind === 'error') return scanned
  const scan = scanned.value
  return ok({
    blocks: scan.blocks.map((block) => ({ line: block.start + 1, type: block.type, tag: block.tag })),
    tokens: (index) => counted(() => scan.tokens(scan.blocks[index]!)),
    slices: (index) => scan.blocks[index]!.slices?.length ?? 0,
    sliceTokens: (index, slice) => counted(() => scan.sliceTokens(scan.blocks[index]!, slice)),
  })
}

/** The body parsed whole in one markdown-it parse (`parse: 'whole'`), its groups let go as they are read. */
function wholeBody(source: string): Result<Body> {
  wholeParser ??= importParser()
  const tokens = parseCounted(wholeParser, source, { elements: MAX_IMPORT_ELEMENTS, scope: 'one import' })
  if (tokens.kind === 'error') return tokens
  const groups: ({ tokens: Token[]; line: number } | undefined)[] = topLevelGroups(tokens.value)
  tokens.value = []
  return ok({
    blocks: groups.map((group) => ({
      line: group!.line,
      type: group!.tokens[0]!.type,
      tag: group!.tokens[0]!.tag,
    })),
    tokens(index) {
      const group = groups[index]!
      groups[index] = undefined
      return ok(group.tokens)
    },
    slices: () => 0,
    sliceTokens: () => ok([]),
  })
}

/** The body's blocks converted and checked one at a time, each let go once converted. */
function* convertBody(
  body: Body,
  how: { dropped: number; shift: boolean; first: { index: number; tokens: Token[] } | undefined },
  frontMatter: { language: string; content: string } | null,
  lineOffset: number,
): Generator<Result<ImportPart>, void, undefined> {
  if (frontMatter) yield checkNodes([codeBlock(frontMatter.language, frontMatter.content)])
  let first = how.first
  for (let i = 0; i < body.blocks.length; i++) {
    if (i === how.dropped) continue
    const block = body.blocks[i]!
    const line = block.line + lineOffset
    if (body.slices(i) > 0) {
      if (!(yield* listPieces(body, i, line))) return
      continue
    }
    let tokens: Token[]
    if (first?.index === i) {
      tokens = first.tokens
      first = undefined
    } else {
      const read = body.tokens(i)
      if (read.kind === 'error') {
        yield read
        return
      }
      tokens = read.value
    }
    const open = tokens[0]!
    if (how.shift && open.type === 'heading_open') {
      const next = `h${Math.min(6, Number(open.tag.slice(1)) + 1)}`
      open.tag = next
      tokens.at(-1)!.tag = next
    }
    const converted =
      open.type === 'html_block'
        ? [codeBlock('html', open.content.replace(/\n+$/, ''))]
        : tokensToBlocks(tokens, { splitMixedLists: true, release: true })
    for (const node of converted) {
      if (node.type === 'heading') node.attrs = { ...node.attrs, [HEADING_ID_ATTR]: newHeadingId() }
    }
    const checked = checkNodes(converted)
    if (checked.kind === 'error') {
      yield invalidAt(line, checked.message)
      return
    }
    yield checked
  }
}

function invalidAt(line: number, message: string) {
  return refuseFor(
    'invalid_content',
    `markdown: line ${line}: ${message.replace(/^markdown: /, '')}`,
    'markdown',
  )
}

/**
 * A long list read a slice at a time, as the document lists it makes (a bullet list's runs of task and
 * plain items are lists of their own): a run of up to BUILD_BATCH_CHILDREN items comes whole (one block, as
 * built whole), a longer one in pieces of BUILD_BATCH_CHILDREN items (`ListPiece`), so at most a slice's
 * tokens and two batches' nodes are held. Each item is checked as the whole list's check would check it.
 */
function* listPieces(body: Body, index: number, line: number): Generator<Result<ImportPart>, boolean> {
  type Run = { type: string; items: PMNode[]; from: number; list: PMNode | null }
  let run: Run | null = null
  let attrs: Record<string, unknown> | undefined
  const listOf = (type: string, items: PMNode[]) =>
    editorSchema()
      .nodeFromJSON(attrs && type === 'orderedList' ? { type, attrs } : { type })
      .copy(prosemirrorModel().Fragment.fromArray(items))
  function* end(ended: Run): Generator<Result<ImportPart>, boolean> {
    if (ended.list) {
      yield ok({ list: ended.list, from: ended.from, items: ended.items, last: true })
      return true
    }
    const list = listOf(ended.type, ended.items)
    ended.items = []
    const checked = checkNodes([list.toJSON() as DocNode])
    if (checked.kind === 'error') {
      yield invalidAt(line, checked.message)
      return false
    }
    yield checked
    return true
  }
  for (let slice = 0; slice < body.slices(index); slice++) {
    const read = body.sliceTokens(index, slice)
    if (read.kind === 'error') {
      yield read
      return false
    }
    if (slice === 0 && read.value[0]!.type === 'ordered_list_open')
      attrs = { start: Number(read.value[0]!.attrGet('start') ?? 1) }
    for (const { list, item } of listItemsOfTokens(read.value)) {
      let node: PMNode
      try {
        node = editorSchema().nodeFromJSON(item)
        node.check()
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error)
        yield invalidAt(line, `a ${list} block is not valid here (${reason}); rewrite it.`)
        return false
      }
      if (run && run.type !== list) {
        if (!(yield* end(run))) return false
        run = null
      }
      run ??= { type: list, items: [], from: 0, list: null }
      run.items.push(node)
      if (!run.list && run.items.length > BUILD_BATCH_CHILDREN) {
        run.list = listOf(list, [run.items[0]!])
        run.list.check()
        yield ok({ list: run.list, from: 0, items: run.items.slice(0, BUILD_BATCH_CHILDREN), last: false })
        run.items = run.items.slice(BUILD_BATCH_CHILDREN)
        run.from = BUILD_BATCH_CHILDREN
      } else if (run.list && run.items.length === BUILD_BATCH_CHILDREN) {
        yield ok({ list: run.list, from: run.from, items: run.items, last: false })
        run.from += BUILD_BATCH_CHILDREN
        run.items = []
      }
    }
  }
  return run ? yield* end(run) : true
}

function codeBlock(language: string, text: string): DocNode {
  return { type: 'codeBlock', attrs: { language }, content: text ? [{ type: 'text', text }] : [] }
}
