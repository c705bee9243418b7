import type Token from 'markdown-it/lib/token.mjs'
import type { DocMark, DocNode } from '../doc-json.ts'
import { markdownItUtils } from '../lazy-libs.ts'

/** Inline content of one markdown-it `inline` token: text runs and hard breaks, plus images lifted out. */
export type InlinePiece =
  | { kind: 'inline'; node: DocNode }
  /** `marks`: the marks around the image (a link among them as its `href`), for where it becomes text. */
  | { kind: 'image'; node: DocNode; marks: DocMark[] }

// The only raw HTML read as markup: marks Markdown has no syntax for. Everything else stays text.
const HTML_MARKS: Record<string, string> = {
  u: 'underline',
  ins: 'underline',
  mark: 'highlight',
  sub: 'subscript',
  sup: 'superscript',
}
const HTML_TAG = /^<(\/?)([a-z]+)\s*>$/i
const HTML_BREAK = /^<br\s*\/?>$/i

const TOKEN_MARKS: Record<string, string> = {
  strong_open: 'bold',
  em_open: 'italic',
  s_open: 'strike',
}
const TOKEN_MARK_CLOSE: Record<string, string> = {
  strong_close: 'bold',
  em_close: 'italic',
  s_close: 'strike',
}

/** Indexes of html_inline tokens that form a balanced pair of an allowed mark tag. */
function pairedHtmlMarks(tokens: Token[]): Set<number> {
  const paired = new Set<number>()
  const open: { tag: string; index: number }[] = []
  tokens.forEach((token, index) => {
    if (token.type !== 'html_inline') return
    const match = HTML_TAG.exec(token.content)
    const tag = match?.[2]?.toLowerCase()
    if (!match || !tag || !HTML_MARKS[tag]) return
    if (match[1] === '') {
      open.push({ tag, index })
      return
    }
    const top = open.at(-1)
    if (top?.tag === tag) {
      open.pop()
      paired.add(top.index)
      paired.add(index)
    }
  })
  return paired
}

function sameMarks(a: DocMark[] | undefined, b: DocMark[] | undefined): boolean {
  return JSON.stringify(a ?? []) === JSON.stringify(b ?? [])
}

/** The marks in order, each type once (its outermost). */
function onePerType(marks: DocMark[]): DocMark[] {
  return marks.filter((mark, index) => marks.findIndex((other) => other.type === mark.type) === index)
}

/** Converts the children of an inline token, keeping marks as a stack like markdown-it nests them. */
export function convertInline(tokens: Token[]): InlinePiece[] {
  const paired = pairedHtmlMarks(tokens)
  const pieces: InlinePiece[] = []
  const marks: DocMark[] = []
  let nestedLinks = 0
  let rawText = false

  const pushText = (text: string, extra?: DocMark) => {
    if (text === '') return
    // Emphasis inside emphasis of the same kind (`*a _b_ c*`, valid CommonMark) is one mark on the text:
    // the schema refuses a text holding a mark twice, which refused the whole file. The stack keeps both,
    // so closing the inner one leaves the outer open.
    const nodeMarks = onePerType(extra ? [...marks, extra] : marks)
    const last = pieces.at(-1)
    if (last?.kind === 'inline' && last.node.type === 'text' && sameMarks(last.node.marks, nodeMarks)) {
      last.node.text += text
      return
    }
    const node: DocNode = { type: 'text', text }
    if (nodeMarks.length > 0) node.marks = nodeMarks
    pieces.push({ kind: 'inline', node })
  }
  const closeMark = (type: string) => {
    const index = marks.findLastIndex((mark) => mark.type === type)
    if (index >= 0) marks.splice(index, 1)
  }

  tokens.forEach((token, index) => {
    const opened = TOKEN_MARKS[token.type]
    const closed = TOKEN_MARK_CLOSE[token.type]
    if (opened) marks.push({ type: opened })
    else if (closed) closeMark(closed)
    else if (token.type === 'text')
      pushText(rawText ? markdownItUtils().unescapeAll(token.content) : token.content)
    else if (token.type === 'softbreak') {
      // `<br>` at a line's end is the break itself: the line break after it adds no space (as after `\`).
      const previous = tokens[index - 1]
      if (!(previous?.type === 'html_inline' && HTML_BREAK.test(previous.content))) pushText(' ')
    } else if (token.type === 'hardbreak') pieces.push({ kind: 'inline', node: { type: 'hardBreak' } })
    else if (token.type === 'code_inline') pushText(token.content, { type: 'code' })
    else if (token.type === 'link_open') {
      // A link inside a link (linkify finds a URL in a link's text) stays the outer link's text.
      if (marks.some((mark) => mark.type === 'link')) {
        nestedLinks++
        // linkify's text is the raw source: its escapes are still in it.
        if (token.markup === 'linkify') rawText = true
      } else
        marks.push({ type: 'link', attrs: { href: token.attrGet('href'), title: token.attrGet('title') } })
    } else if (token.type === 'link_close') {
      if (nestedLinks > 0) {
        nestedLinks--
        rawText = false
      } else closeMark('link')
    } else if (token.type === 'image') {
      const alt = token.children?.map((child) => child.content).join('') ?? token.content
      // An image inside a link (a README badge) keeps the link's target.
      const href = marks.find((mark) => mark.type === 'link')?.attrs?.href ?? null
      const attrs = {
        src: token.attrGet('src'),
        alt: alt === '' ? null : alt,
        title: token.attrGet('title'),
        ...(href ? { href } : {}),
      }
      pieces.push({ kind: 'image', node: { type: 'image', attrs }, marks: onePerType([...marks]) })
    } else if (token.type === 'html_inline') {
      if (HTML_BREAK.test(token.content)) {
        pieces.push({ kind: 'inline', node: { type: 'hardBreak' } })
        return
      }
      const match = HTML_TAG.exec(token.content)
      const markType = HTML_MARKS[match?.[2]?.toLowerCase() ?? '']
      if (paired.has(index) && markType) {
        if (match?.[1] === '') marks.push({ type: markType })
        else closeMark(markType)
        return
      }
      // A line break inside a tag is a space, as soft breaks are: the tag stays one line, written as is.
      pushText(token.content.replace(/\r?\n/g, ' '))
    } else pushText(token.content)
  })
  return pieces
}
