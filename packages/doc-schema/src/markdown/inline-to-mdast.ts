import type { PhrasingContent } from 'mdast'
import type { DocMark, DocNode } from '../doc-json.ts'
import type { TextData } from './escape-text.ts'
import { freeDelimiters } from './free-delimiters.ts'
import { acceptedInline, SUGGESTION_ORDER, suggestionMarkers } from './suggestion-text.ts'

// Marks in the order that breaks ties, outermost first (see `wrap`): emphasis around a link (`**[a](u)**`,
// the commoner form in real files); code is innermost because inline code cannot contain other Markdown.
const MARK_ORDER = [
  'italic',
  'bold',
  'strike',
  'link',
  'underline',
  'highlight',
  'subscript',
  'superscript',
  'code',
]
const SHOWN_MARK_ORDER = [...SUGGESTION_ORDER, ...MARK_ORDER]
const HTML_TAGS: Record<string, string> = {
  underline: 'u',
  highlight: 'mark',
  subscript: 'sub',
  superscript: 'sup',
}

export type InlineContext = {
  /** `show`: pending suggestions as `{++…++}` / `{--…--}`; else accepted content only (SerializeOptions). */
  suggestions?: 'show'
  /** Table cells cannot hold a Markdown line break: write `<br>` there. */
  inTable: boolean
  /**
   * The nodes share their line with other content (a cell of several blocks joined by `<br>`): what this
   * block holds does not tell what the line holds, so no escape is relaxed by looking at the block.
   */
  sharedLine?: boolean
  /** Offsets of each text node's `*` and `_` that cannot form emphasis (free-delimiters.ts). */
  free?: Map<DocNode, number[]>
  /**
   * Per text node, the offset before which a `(` after `]` needs no escape: no `[` in text comes before it
   * in the block, so no link could close there.
   */
  parenFree?: Map<DocNode, number>
}

function markKey(mark: DocMark | undefined): string {
  if (!mark) return ''
  if (mark.type.startsWith('suggestion')) return `${mark.type} ${String(mark.attrs?.id ?? '')}`
  if (mark.type !== 'link') return mark.type
  return `link ${String(mark.attrs?.href ?? '')} ${String(mark.attrs?.title ?? '')}`
}

function markOf(node: DocNode, type: string): DocMark | undefined {
  return node.marks?.find((mark) => mark.type === type)
}

const NONE: string[] = []

/** The `types` (in their order) the node carries a mark of; a run with one mark, the common case, is quick. */
function typesOn(node: DocNode, types: string[]): string[] {
  const marks = node.marks
  if (!marks || marks.length === 0) return NONE
  if (marks.length === 1) return types.includes(marks[0]!.type) ? [marks[0]!.type] : NONE
  return types.filter((type) => markOf(node, type))
}

/** Inline ProseMirror JSON (text with marks, hard breaks) as mdast phrasing content. */
export function inlineToMdast(nodes: DocNode[], context: InlineContext): PhrasingContent[] {
  // A trailing hard break has no Markdown form.
  const shown = context.suggestions === 'show'
  const trimmed = shown ? [...nodes] : acceptedInline(nodes)
  while (trimmed.at(-1)?.type === 'hardBreak') trimmed.pop()
  const order = shown ? SHOWN_MARK_ORDER : MARK_ORDER
  if (context.sharedLine) return wrap(trimmed, order, context)
  const free = freeDelimiters(trimmed)
  const parenFree = parenFreeOffsets(trimmed)
  if (!free && !parenFree) return wrap(trimmed, order, context)
  return wrap(trimmed, order, { ...context, free, parenFree })
}

/**
 * Where in each text node no link could be closed yet: up to its first `[`, while no `[` in text (outside
 * code) came before in the block. A link's own brackets open nothing after it (the link consumed them).
 * Only what comes before decides (a bounded read writes a block cut short; block-prefix.ts).
 */
function parenFreeOffsets(nodes: DocNode[]): Map<DocNode, number> | undefined {
  let out: Map<DocNode, number> | undefined
  for (const node of nodes) {
    if (node.type !== 'text' || markOf(node, 'code')) continue
    const text = node.text ?? ''
    const bracket = text.indexOf('[')
    if (bracket !== 0 && text.includes('](')) {
      out ??= new Map()
      out.set(node, bracket === -1 ? text.length : bracket)
    }
    if (bracket !== -1) return out
  }
  return out
}

/** Where the run of nodes from `index` carrying the same `type` mark as nodes[index] ends. */
function runEnd(nodes: DocNode[], index: number, type: string): number {
  const key = markKey(markOf(nodes[index]!, type))
  let end = index + 1
  while (end < nodes.length && markKey(markOf(nodes[end]!, type)) === key) end++
  return end
}

/**
 * Nests the marks of `types` (not yet written) around the nodes: at each position the mark whose run
 * reaches furthest is outermost, ties broken by MARK_ORDER, so `[**a** b](u)` keeps the link outside and
 * `**[a](u) b**` the bold. Code only once no other mark is left (it holds no Markdown).
 * The same content always gives the same nesting.
 */
function wrap(nodes: DocNode[], types: string[], context: InlineContext): PhrasingContent[] {
  const out: PhrasingContent[] = []
  let index = 0
  while (index < nodes.length) {
    const node = nodes[index]!
    const present = typesOn(node, types)
    const candidates = present.length > 1 ? present.filter((type) => type !== 'code') : present
    let best: string | undefined
    let bestEnd = index
    for (const type of candidates) {
      let end = runEnd(nodes, index, type)
      // A code span ends where another mark starts: that mark goes outside it.
      if (type === 'code') {
        const other = (at: number) => types.some((t) => t !== 'code' && markOf(nodes[at]!, t))
        for (let at = index + 1; at < end; at++) if (other(at)) end = at
      }
      if (end > bestEnd) {
        best = type
        bestEnd = end
      }
    }
    if (!best) {
      let end = index + 1
      while (end < nodes.length && typesOn(nodes[end]!, types).length === 0) end++
      out.push(...nodes.slice(index, end).flatMap((leafNode) => leaf(leafNode, context)))
      index = end
      continue
    }
    const rest = types.filter((type) => type !== best)
    out.push(...wrapRun(nodes.slice(index, bestEnd), markOf(node, best)!, rest, context))
    index = bestEnd
  }
  return out
}

/**
 * A code span of only spaces does not survive Markdown as written (markdown-it reads any such span back
 * as one space), so write the form it reads back: one space. Keeps export∘import stable.
 */
function codeSpanText(text: string): string {
  return /^[ \t\n]+$/.test(text) ? ' ' : text
}

function wrapRun(run: DocNode[], mark: DocMark, types: string[], context: InlineContext) {
  if (mark.type === 'code') {
    return run.map(
      (node): PhrasingContent =>
        node.type === 'text'
          ? { type: 'inlineCode', value: codeSpanText(node.text ?? '') }
          : breakNode(context),
    )
  }
  const children = wrap(run, types, context)
  switch (mark.type) {
    case 'link': {
      const title = mark.attrs?.title
      return [
        {
          type: 'link',
          url: String(mark.attrs?.href ?? ''),
          title: typeof title === 'string' ? title : null,
          children,
        } as PhrasingContent,
      ]
    }
    case 'bold':
      return [{ type: 'strong', children } as PhrasingContent]
    case 'italic':
      return [{ type: 'emphasis', children } as PhrasingContent]
    case 'strike':
      return [{ type: 'delete', children } as PhrasingContent]
    default: {
      const markers = suggestionMarkers(mark.type)
      if (markers) {
        return [
          { type: 'html', value: markers[0] },
          ...children,
          { type: 'html', value: markers[1] },
        ] as PhrasingContent[]
      }
      const tag = HTML_TAGS[mark.type]
      if (!tag) return children
      return [
        { type: 'html', value: `<${tag}>` },
        ...children,
        { type: 'html', value: `</${tag}>` },
      ] as PhrasingContent[]
    }
  }
}

function breakNode(context: InlineContext): PhrasingContent {
  return context.inTable ? { type: 'html', value: '<br>' } : { type: 'break' }
}

function leaf(node: DocNode, context: InlineContext): PhrasingContent[] {
  if (node.type === 'text') {
    const value = node.text ?? ''
    const free = context.free?.get(node)
    const parenFree = context.parenFree?.get(node)
    // Shown with suggestions, a marker typed as text is escaped (escape-text.ts): only marks show as markers.
    const markers = context.suggestions === 'show' && /[{}]/.test(value)
    if (!free && !parenFree && !markers) return [{ type: 'text', value }]
    const data: TextData = markers ? { free, parenFree, markers } : { free, parenFree }
    return [{ type: 'text', value, data }]
  }
  if (node.type === 'hardBreak') return [breakNode(context)]
  return []
}
