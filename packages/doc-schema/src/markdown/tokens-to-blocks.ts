import type Token from 'markdown-it/lib/token.mjs'
import type { DocNode } from '../doc-json.ts'
import { markdownItUtils } from '../lazy-libs.ts'
import { convertInline } from './inline-tokens.ts'
import { mediaNodeForLine } from './media-url.ts'

const TASK_PREFIX = /^\[([ xX])\](?: |$)/

/**
 * Where the conversion is in the token stream. `splitMixedLists` (file imports): a bullet list mixing task
 * and plain items becomes consecutive lists, one per run of the same kind; otherwise it is one plain list.
 * `release`: each block's and list item's tokens are taken out of the array once converted (a file's one
 * list of 75,000 items is ~450,000 tokens: they go as its JSON grows, not after).
 */
type Cursor = { index: number; splitMixedLists: boolean; release: boolean }

/**
 * Blocks of a markdown-it token stream; `nested` is false only at the document's top level. With `release`
 * the array is emptied as it is read (pass an array nobody reads after).
 */
export function tokensToBlocks(
  tokens: Token[],
  opts: { splitMixedLists?: boolean; release?: boolean } = {},
): DocNode[] {
  const cursor: Cursor = {
    index: 0,
    splitMixedLists: opts.splitMixedLists ?? false,
    release: opts.release ?? false,
  }
  return readBlocks(tokens, cursor, null, false)
}

/**
 * The items of one list's tokens (`…_list_open`, its items, `…_list_close`), each with the type of the
 * document list it goes in, as an import converts them (`splitMixedLists`): a bullet list's task items are
 * task items of a task list, its other items a bullet list's. A long list read a slice at a time
 * (import-blocks.ts) is converted with this; the tokens are let go as they are read.
 */
export function listItemsOfTokens(tokens: Token[]): { list: string; item: DocNode }[] {
  const ordered = tokens[0]?.type === 'ordered_list_open'
  const cursor: Cursor = { index: 1, splitMixedLists: true, release: true }
  const items = readItems(tokens, cursor, ordered ? 'ordered_list_close' : 'bullet_list_close')
  release(tokens, cursor, 0)
  return items.map((item) => {
    if (ordered) return { list: 'orderedList', item }
    const match = taskPrefix(item)
    return match ? { list: 'taskList', item: taskItem(item, match) } : { list: 'bulletList', item }
  })
}

/** Lets go of the tokens from `start` up to the cursor (converted), when the conversion releases them. */
function release(tokens: Token[], cursor: Cursor, start: number): void {
  if (!cursor.release) return
  for (let i = start; i < cursor.index; i++) (tokens as (Token | undefined)[])[i] = undefined
}

function readBlocks(tokens: Token[], cursor: Cursor, closeType: string | null, nested: boolean) {
  const blocks: DocNode[] = []
  while (cursor.index < tokens.length) {
    const token = tokens[cursor.index]!
    if (token.type === closeType) {
      cursor.index++
      return blocks
    }
    const start = cursor.index
    blocks.push(...readBlock(tokens, cursor, nested))
    release(tokens, cursor, start)
  }
  return blocks
}

function readBlock(tokens: Token[], cursor: Cursor, nested: boolean): DocNode[] {
  const token = tokens[cursor.index++]!
  switch (token.type) {
    case 'paragraph_open': {
      const inline = tokens[cursor.index]
      cursor.index += 2 // inline, paragraph_close
      return paragraphBlocks(inline?.children ?? [])
    }
    case 'heading_open': {
      const inline = tokens[cursor.index]
      cursor.index += 2
      // A heading is one line in Markdown: a line break in it reads back as a space.
      const content = trimEdges(
        inlineOnly(inline?.children ?? []).map((node) =>
          node.type === 'hardBreak' ? { type: 'text', text: ' ' } : node,
        ),
      )
      // Headings inside lists, quotes and cells are not sections: they become paragraphs.
      if (nested) return [mediaEmbedFor(paragraph(content)) ?? paragraph(content)]
      return [{ type: 'heading', attrs: { level: Number(token.tag.slice(1)) }, content }]
    }
    case 'blockquote_open': {
      const content = readBlocks(tokens, cursor, 'blockquote_close', true)
      return [{ type: 'blockquote', content: content.length > 0 ? content : [paragraph([])] }]
    }
    case 'bullet_list_open':
      return bulletOrTaskLists(readItems(tokens, cursor, 'bullet_list_close'), cursor.splitMixedLists)
    case 'ordered_list_open': {
      const start = Number(token.attrGet('start') ?? 1)
      const content = readItems(tokens, cursor, 'ordered_list_close')
      return [{ type: 'orderedList', attrs: { start }, content }]
    }
    case 'fence':
    case 'code_block': {
      // markdown-it leaves backslash escapes and entities in a fence's info string for the renderer to undo.
      const language = markdownItUtils().unescapeAll(token.info).trim().split(/\s+/)[0] || null
      const text = token.content.replace(/\n$/, '')
      return [{ type: 'codeBlock', attrs: { language }, content: text ? [{ type: 'text', text }] : [] }]
    }
    case 'hr':
      return [{ type: 'horizontalRule' }]
    case 'table_open':
      return [readTable(tokens, cursor)]
    case 'html_block':
      return htmlBlockAsText(token.content)
    default:
      return []
  }
}

/**
 * Raw HTML is kept as visible text, one paragraph, lines joined by hard breaks; inside a list item or a
 * quote such a paragraph is written back as the HTML block (html-in-text.ts).
 */
function htmlBlockAsText(html: string): DocNode[] {
  const content: DocNode[] = []
  for (const line of html.split('\n')) {
    const text = line.trim()
    if (text === '') continue
    if (content.length > 0) content.push({ type: 'hardBreak' })
    content.push({ type: 'text', text })
  }
  return content.length > 0 ? [paragraph(content)] : []
}

function paragraph(content: DocNode[]): DocNode {
  return { type: 'paragraph', content }
}

/**
 * Inline content where images cannot be blocks (headings): an image is its alt text, with the marks around
 * it (a link to the image's target when it had one). Adjacent images stay apart: a space between them, so two badges linking to the
 * same target do not merge into one link (or one word).
 */
function inlineOnly(children: Token[]): DocNode[] {
  const nodes: DocNode[] = []
  let lastWasImage = false
  for (const piece of convertInline(children)) {
    if (piece.kind === 'inline') {
      nodes.push(piece.node)
      lastWasImage = false
      continue
    }
    const alt = piece.node.attrs?.alt
    if (typeof alt !== 'string' || alt === '') continue
    if (lastWasImage) nodes.push({ type: 'text', text: ' ' })
    const marks = piece.marks
    nodes.push(marks.length > 0 ? { type: 'text', text: alt, marks } : { type: 'text', text: alt })
    lastWasImage = true
  }
  return nodes
}

/**
 * A paragraph, split around images (block nodes here); a paragraph holding only a media URL is an embed.
 * An image after other content of the paragraph is marked `sameLine`, so export writes it back on that line.
 */
function paragraphBlocks(children: Token[]): DocNode[] {
  const blocks: DocNode[] = []
  let run: DocNode[] = []
  for (const piece of convertInline(children)) {
    if (piece.kind === 'inline') {
      run.push(piece.node)
      continue
    }
    pushRun(blocks, run)
    run = []
    if (blocks.length > 0) piece.node.attrs = { ...piece.node.attrs, sameLine: true }
    blocks.push(piece.node)
  }
  // Edge whitespace only survives as `&#x20;` entities: trimming it keeps export stable and readable.
  if (blocks.length === 0) blocks.push(paragraph(trimEdges(run)))
  else pushRun(blocks, run)
  return blocks.map((block) => mediaEmbedFor(block) ?? block)
}

/** Text around a lifted image becomes its own paragraph, without the spaces that separated them. */
function pushRun(blocks: DocNode[], run: DocNode[]) {
  const content = trimEdges(run)
  if (content.length > 0) blocks.push(paragraph(content))
}

/** Drops hard breaks, whitespace and emptied text at both ends of inline content. */
function trimEdges(run: DocNode[]): DocNode[] {
  const nodes = run.filter((node) => node.type !== 'text' || node.text !== '').map((node) => ({ ...node }))
  for (;;) {
    const first = nodes[0]
    if (first?.type === 'hardBreak') nodes.shift()
    else if (first?.type === 'text' && first.text !== first.text?.trimStart()) {
      first.text = first.text!.trimStart()
      if (first.text === '') nodes.shift()
    } else break
  }
  for (;;) {
    const last = nodes.at(-1)
    if (last?.type === 'hardBreak') nodes.pop()
    else if (last?.type === 'text' && last.text !== last.text?.trimEnd()) {
      last.text = last.text!.trimEnd()
      if (last.text === '') nodes.pop()
    } else break
  }
  return nodes
}

/**
 * The embed for a paragraph that is one plain text or one bare link holding a media URL, else null. Plain
 * texts side by side count as the one text they become (a heading in a list whose image is its alt text:
 * `### https://youtu.be/x![i](…)` read as two, exported as one, read back as an embed).
 */
function mediaEmbedFor(block: DocNode): DocNode | null {
  if (block.type !== 'paragraph' || !block.content?.length) return null
  if (block.content.length > 1)
    return block.content.every((node) => node.type === 'text' && !node.marks?.length)
      ? mediaNodeForLine(block.content.map((node) => node.text ?? '').join(''))
      : null
  const only = block.content[0]!
  if (only.type !== 'text') return null
  const marks = only.marks ?? []
  const bareLink = marks.length === 1 && marks[0]?.type === 'link' && marks[0].attrs?.href === only.text
  if (marks.length > 0 && !bareLink) return null
  return mediaNodeForLine(only.text ?? '')
}

function readItems(tokens: Token[], cursor: Cursor, closeType: string): DocNode[] {
  const items: DocNode[] = []
  while (cursor.index < tokens.length) {
    const start = cursor.index
    const token = tokens[cursor.index++]!
    if (token.type === closeType) break
    if (token.type !== 'list_item_open') continue
    // The checkbox is read from the source: an escaped `\[ ]` is text, not a task (GFM).
    const head = tokens[cursor.index]?.type === 'paragraph_open' ? tokens[cursor.index + 1] : undefined
    const checkbox = TASK_PREFIX.test(head?.content ?? '')
    const content = readBlocks(tokens, cursor, 'list_item_close', true)
    // A list item must start with a paragraph (schema: `paragraph block*`).
    if (content[0]?.type !== 'paragraph') content.unshift(paragraph([]))
    const item: DocNode = { type: 'listItem', content }
    if (checkbox) withCheckbox.add(item)
    items.push(item)
    release(tokens, cursor, start)
  }
  return items
}

/** Items whose source starts with an unescaped `[ ]`/`[x]` (set by readItems). */
const withCheckbox = new WeakSet<DocNode>()

/**
 * GFM task lists: items starting with `[ ]` or `[x]` are task items. A list mixing task and plain items is
 * one plain list, or with `split` consecutive lists, one per run of the same kind (the schema keeps the two
 * kinds apart), so no checkbox is lost; they are written back as separate lists (`-` then `*`).
 */
function bulletOrTaskLists(items: DocNode[], split: boolean): DocNode[] {
  if (items.length === 0) return [{ type: 'bulletList', content: items }]
  if (!split && items.some((item) => taskPrefix(item) === null))
    return [{ type: 'bulletList', content: items }]
  const lists: DocNode[] = []
  for (const item of items) {
    const match = taskPrefix(item)
    const type = match ? 'taskList' : 'bulletList'
    const converted = match ? taskItem(item, match) : item
    const last = lists.at(-1)
    if (last?.type === type) last.content!.push(converted)
    else lists.push({ type, content: [converted] })
  }
  return lists
}

function taskItem(item: DocNode, match: RegExpExecArray): DocNode {
  const [first, ...rest] = item.content ?? []
  const inline = [...(first?.content ?? [])]
  const head = inline[0]!
  const remaining = (head.text ?? '').slice(match[0].length)
  if (remaining === '') inline.shift()
  else inline[0] = { ...head, text: remaining }
  return { type: 'taskItem', attrs: { checked: match[1] !== ' ' }, content: [paragraph(inline), ...rest] }
}

function taskPrefix(item: DocNode): RegExpExecArray | null {
  if (!withCheckbox.has(item)) return null
  const head = item.content?.[0]?.content?.[0]
  if (head?.type !== 'text' || head.marks) return null
  return TASK_PREFIX.exec(head.text ?? '')
}

function readTable(tokens: Token[], cursor: Cursor): DocNode {
  const rows: DocNode[] = []
  let cells: DocNode[] = []
  while (cursor.index < tokens.length) {
    const token = tokens[cursor.index++]!
    if (token.type === 'table_close') break
    if (token.type === 'tr_close') {
      rows.push({ type: 'tableRow', content: cells })
      cells = []
    } else if (token.type === 'th_open' || token.type === 'td_open') {
      const inline = tokens[cursor.index]
      cursor.index += 2 // inline, th_close/td_close
      const style = token.attrGet('style') ?? ''
      const align = /text-align:\s*(left|center|right)/.exec(style)?.[1] ?? null
      cells.push({
        type: token.type === 'th_open' ? 'tableHeader' : 'tableCell',
        attrs: { align },
        // Markdown trims cells; an entity-encoded space at the edge would not survive a second trip.
        content: paragraphBlocks(inline?.children ?? []).map((block) =>
          block.type === 'paragraph' ? { ...block, content: trimEdges(block.content ?? []) } : block,
        ),
      })
    }
  }
  return { type: 'table', content: rows }
}
