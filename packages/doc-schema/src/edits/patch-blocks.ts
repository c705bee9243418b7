/**
 * Blocks rewritten in place: when an edit replaces blocks with new ones of the same kinds, the old Yjs
 * elements are changed into the new content (attributes set, text diffed character by character, children
 * paired) instead of being deleted and inserted again. What both share keeps its Yjs identity, so a person
 * whose cursor is in such a block keeps it, and keystrokes they made just before are not lost with it.
 */
import type { Node as PMNode } from '@tiptap/pm/model'
import * as Y from 'yjs'
import { type DocNode, MEDIA_TYPES } from '../doc-json.ts'
import { editorSchema } from '../lazy-libs.ts'
import { stableJSON } from '../sections/section-rev.ts'
import { marksToAttributes, nodeToY } from '../yjs/build-y.ts'
import { blockPlainText } from '../yjs/plain-text.ts'
import { yElementToJSON } from '../yjs/read-y.ts'
import { rewriteText, type TextRun } from './rewrite-text.ts'

/** A child as the new content has it: a run of text (one Y.XmlText), or an element. */
type NewChild = { kind: 'text'; runs: TextRun[] } | { kind: 'element'; node: PMNode }
type OldChild = Y.XmlElement | Y.XmlText

/** The children of a ProseMirror node grouped as y-prosemirror stores them (adjacent text nodes together). */
function newChildren(node: PMNode): NewChild[] {
  const out: NewChild[] = []
  node.forEach((child) => {
    if (child.isText) {
      const run: TextRun = { text: child.text ?? '', attributes: marksToAttributes(child) }
      const last = out.at(-1)
      if (last?.kind === 'text') last.runs.push(run)
      else out.push({ kind: 'text', runs: [run] })
    } else out.push({ kind: 'element', node: child })
  })
  return out
}

/** Text of a ProseMirror node as `blockPlainText` gives an element's: used only to pair equal children. */
function pmPlainText(node: PMNode): string {
  const lines: string[] = []
  const visit = (child: PMNode): boolean => {
    if (child.isTextblock) {
      let line = ''
      child.forEach((inline) => {
        line += inline.isText ? (inline.text ?? '') : inline.type.name === 'hardBreak' ? '\n' : ''
      })
      if (line !== '') lines.push(line)
      return false
    }
    if (child.isAtom && child.isBlock) {
      const { alt, src } = child.attrs
      const text = typeof alt === 'string' && alt ? alt : typeof src === 'string' ? src : ''
      if (text !== '') lines.push(text)
    }
    return true
  }
  if (visit(node)) node.descendants(visit)
  return lines.join('\n')
}

const oldKey = (child: OldChild): string =>
  child instanceof Y.XmlText
    ? `#text\u0000${plain(child)}`
    : `${child.nodeName}\u0000${blockPlainText(child)}`
/**
 * Kinds that pair with each other: a header cell with a body cell, since Markdown writes a table's first
 * row the same way either way (rows given alone are read as body cells); paired, the old element keeps
 * its type, so a header row rewritten in place stays the header.
 */
const SAME_KIND: Record<string, string> = { tableHeader: 'tableCell' }
const kindOf = (name: string): string => SAME_KIND[name] ?? name
const oldType = (child: OldChild): string => (child instanceof Y.XmlText ? '#text' : kindOf(child.nodeName))
const newType = (child: NewChild): string => (child.kind === 'text' ? '#text' : kindOf(child.node.type.name))

function newKey(child: NewChild): string {
  if (child.kind === 'element') return `${child.node.type.name}\u0000${pmPlainText(child.node)}`
  return `#text\u0000${child.runs.map((run) => run.text).join('')}`
}

function plain(text: Y.XmlText): string {
  let out = ''
  for (const op of text.toDelta() as { insert: unknown }[])
    if (typeof op.insert === 'string') out += op.insert
  return out
}

type Step =
  | { kind: 'pair'; old: OldChild; next: NewChild }
  | { kind: 'delete' }
  | { kind: 'insert'; next: NewChild }

/**
 * Pairs old and new children: equal ones from the start and from the end (so an item inserted in the
 * middle of a list is an insertion, not a rewrite of every item after it), then the rest by position where
 * the kinds agree; the others are deleted or inserted.
 */
function align(old: readonly OldChild[], next: readonly NewChild[]): Step[] {
  const oldKeys = old.map(oldKey)
  const newKeys = next.map(newKey)
  let start = 0
  while (start < old.length && start < next.length && oldKeys[start] === newKeys[start]) start++
  let oldEnd = old.length
  let newEnd = next.length
  while (oldEnd > start && newEnd > start && oldKeys[oldEnd - 1] === newKeys[newEnd - 1]) {
    oldEnd--
    newEnd--
  }
  const steps: Step[] = []
  for (let i = 0; i < start; i++) steps.push({ kind: 'pair', old: old[i]!, next: next[i]! })
  const middle = Math.min(oldEnd - start, newEnd - start)
  for (let i = 0; i < middle; i++) {
    const o = old[start + i]!
    const n = next[start + i]!
    if (oldType(o) === newType(n)) steps.push({ kind: 'pair', old: o, next: n })
    else steps.push({ kind: 'delete' }, { kind: 'insert', next: n })
  }
  for (let i = start + middle; i < oldEnd; i++) steps.push({ kind: 'delete' })
  for (let i = start + middle; i < newEnd; i++) steps.push({ kind: 'insert', next: next[i]! })
  for (let i = 0; i < old.length - oldEnd; i++)
    steps.push({ kind: 'pair', old: old[oldEnd + i]!, next: next[newEnd + i]! })
  return steps
}

function buildChild(child: NewChild): OldChild {
  if (child.kind === 'element') return nodeToY(child.node)
  const text = new Y.XmlText()
  text.applyDelta(child.runs.map((run) => ({ insert: run.text, attributes: run.attributes })))
  return text
}

/**
 * Turns `parent`'s children `[start, start + old.length)` (which are `old`) into `next`, in place where
 * kinds agree. Call inside a transaction.
 */
function patchNewChildren(
  parent: Y.XmlFragment | Y.XmlElement,
  start: number,
  old: readonly OldChild[],
  next: readonly NewChild[],
): void {
  let index = start
  for (const step of align(old, next)) {
    if (step.kind === 'delete') parent.delete(index, 1)
    else if (step.kind === 'insert') parent.insert(index++, [buildChild(step.next) as Y.XmlElement])
    else {
      const { old: o, next: n } = step
      if (o instanceof Y.XmlText && n.kind === 'text') rewriteText(o, 0, plain(o).length, n.runs, 'all')
      else if (o instanceof Y.XmlElement && n.kind === 'element') patchElement(o, n.node)
      index++
    }
  }
}

/** Changes `element` (of the node's type) into `node`: attributes, then children. */
export function patchElement(element: Y.XmlElement, node: PMNode): void {
  const stored = element.getAttributes() as Record<string, unknown>
  for (const [key, value] of Object.entries(node.attrs)) {
    if (value === null || value === undefined) continue
    if (stableJSON(stored[key]) !== stableJSON(value)) element.setAttribute(key, value as string)
  }
  for (const key of Object.keys(stored)) {
    const value = node.attrs[key]
    if (value === null || value === undefined) element.removeAttribute(key)
  }
  const children = element
    .toArray()
    .filter((child): child is OldChild => child instanceof Y.XmlElement || child instanceof Y.XmlText)
  patchNewChildren(element, 0, children, newChildren(node))
}

/**
 * Replaces `parent`'s consecutive children `old` (from index `start`: blocks of a section, items of a list,
 * rows of a table) with `nodes`, in place where the kinds agree (see `align`). Call inside a transaction.
 */
export function patchChildren(
  parent: Y.XmlFragment | Y.XmlElement,
  start: number,
  old: readonly Y.XmlElement[],
  nodes: readonly PMNode[],
): void {
  patchNewChildren(
    parent,
    start,
    old,
    nodes.map((node) => ({ kind: 'element', node })),
  )
}

/** What a read shows for a media element: `[image: alt]`, `[image]`, `[video: url]`, `[audio: url]`. */
export function mediaPlaceholder(media: Y.XmlElement): string {
  const src = String(media.getAttribute('src') ?? '')
  if (media.nodeName === 'image') {
    const alt = media.getAttribute('alt')
    return typeof alt === 'string' && alt ? `[image: ${alt}]` : '[image]'
  }
  const kind = media.nodeName === 'mediaEmbed' && media.getAttribute('kind') === 'audio' ? 'audio' : 'video'
  return `[${kind}: ${src}]`
}

/** Every media element under the given blocks, in document order. */
export function mediaUnder(blocks: readonly Y.XmlElement[]): Y.XmlElement[] {
  const found: Y.XmlElement[] = []
  const stack = [...blocks].reverse()
  for (let element = stack.pop(); element !== undefined; element = stack.pop()) {
    if (MEDIA_TYPES.has(element.nodeName)) found.push(element)
    const children = element.toArray()
    for (let i = children.length - 1; i >= 0; i--) {
      const child = children[i]
      if (child instanceof Y.XmlElement) stack.push(child)
    }
  }
  return found
}

/**
 * Puts removed media back where the new Markdown keeps their placeholder: a paragraph whose whole text is
 * `[image: alt]` (as the read showed it) becomes that image again, each media element at most once, in
 * order. Returns the blocks and the media elements kept.
 */
export function restorePlaceholders(
  blocks: readonly DocNode[],
  media: readonly Y.XmlElement[],
): { blocks: DocNode[]; kept: Set<Y.XmlElement> } {
  const kept = new Set<Y.XmlElement>()
  if (media.length === 0) return { blocks: [...blocks], kept }
  const available = media.map((element) => ({ element, placeholder: mediaPlaceholder(element) }))
  const swap = (node: DocNode): DocNode => {
    if (node.type === 'paragraph') {
      const content = node.content ?? []
      const text = content.every((child) => child.type === 'text' && !child.marks?.length)
        ? content.map((child) => child.text ?? '').join('')
        : undefined
      const match =
        text === undefined
          ? undefined
          : available.find((m) => m.placeholder === text.trim() && !kept.has(m.element))
      if (match) {
        kept.add(match.element)
        return yElementToJSON(match.element)
      }
      return node
    }
    return node.content ? { ...node, content: node.content.map(swap) } : node
  }
  return { blocks: blocks.map(swap), kept }
}

/** The nodes of checked blocks, or undefined when one does not fit the schema. */
export function toNodes(blocks: readonly DocNode[]): PMNode[] | undefined {
  try {
    return blocks.map((block) => {
      const node = editorSchema().nodeFromJSON(block)
      node.check()
      return node
    })
  } catch {
    return undefined
  }
}
