import type { PhrasingContent } from 'mdast'
import type { DocMark, DocNode } from '../doc-json.ts'

// Fixed nesting, outermost first, so the same marks always print the same way; code is innermost
// because inline code cannot contain other Markdown.
const MARK_ORDER = [
  'link',
  'bold',
  'italic',
  'strike',
  'underline',
  'highlight',
  'subscript',
  'superscript',
  'code',
]
const HTML_TAGS: Record<string, string> = {
  underline: 'u',
  highlight: 'mark',
  subscript: 'sub',
  superscript: 'sup',
}

export type InlineContext = {
  /** Table cells cannot hold a Markdown line break: write `<br>` there. */
  inTable: boolean
}

function markKey(mark: DocMark | undefined): string {
  if (!mark) return ''
  if (mark.type !== 'link') return mark.type
  return `link ${String(mark.attrs?.href ?? '')} ${String(mark.attrs?.title ?? '')}`
}

function markAt(node: DocNode, depth: number): DocMark | undefined {
  const type = MARK_ORDER[depth]
  return node.marks?.find((mark) => mark.type === type)
}

/** Inline ProseMirror JSON (text with marks, hard breaks) as mdast phrasing content. */
export function inlineToMdast(nodes: DocNode[], context: InlineContext): PhrasingContent[] {
  // A trailing hard break has no Markdown form.
  const trimmed = [...nodes]
  while (trimmed.at(-1)?.type === 'hardBreak') trimmed.pop()
  return wrap(trimmed, 0, context)
}

function wrap(nodes: DocNode[], depth: number, context: InlineContext): PhrasingContent[] {
  if (depth >= MARK_ORDER.length) return nodes.flatMap((node) => leaf(node, context))
  const out: PhrasingContent[] = []
  let index = 0
  while (index < nodes.length) {
    const mark = markAt(nodes[index]!, depth)
    const key = markKey(mark)
    let end = index + 1
    while (end < nodes.length && markKey(markAt(nodes[end]!, depth)) === key) end++
    const run = nodes.slice(index, end)
    out.push(...wrapRun(run, mark, depth, context))
    index = end
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

function wrapRun(run: DocNode[], mark: DocMark | undefined, depth: number, context: InlineContext) {
  if (!mark) return wrap(run, depth + 1, context)
  if (mark.type === 'code') {
    return run.map(
      (node): PhrasingContent =>
        node.type === 'text'
          ? { type: 'inlineCode', value: codeSpanText(node.text ?? '') }
          : breakNode(context),
    )
  }
  const children = wrap(run, depth + 1, context)
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
  if (node.type === 'text') return [{ type: 'text', value: node.text ?? '' }]
  if (node.type === 'hardBreak') return [breakNode(context)]
  return []
}
