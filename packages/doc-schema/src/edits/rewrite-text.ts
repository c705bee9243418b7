/**
 * Rewrites a stretch of a Y.XmlText in place: a character diff decides what changes, so shared characters
 * stay the same Yjs items (their formatting and a person's cursor or typing next to them survive) and only
 * the differing stretches are deleted and inserted, in the caller's transaction.
 */
import type * as Y from 'yjs'
import type { DocMark, DocNode } from '../doc-json.ts'
import { editorSchema } from '../lazy-libs.ts'
import { stableJSON } from '../sections/section-rev.ts'
import { diffText } from './text-diff.ts'

/** Formatting attributes of a character as Yjs stores them: `{ [markName]: markAttrs }`. */
export type TextAttributes = Record<string, unknown>

/** A stretch of new text with its marks, as the Markdown parser gives it. */
export type TextRun = { text: string; attributes: TextAttributes }

/**
 * Which formatting the new runs decide: `all` (a block rewritten from Markdown), or the mark types named
 * (the marks old and new text spelled out in Markdown); every other mark a new character takes from the
 * text it replaces at that position, so plain new text never changes formatting.
 */
export type Controlled = 'all' | ReadonlySet<string>

/** Yjs attributes of parsed marks (the schema's attributes with defaults, as TipTap stores them). */
export function marksToTextAttributes(marks: readonly DocMark[] | undefined): TextAttributes {
  const attributes: TextAttributes = {}
  for (const mark of marks ?? []) {
    const type = editorSchema().marks[mark.type]
    if (type) attributes[mark.type] = type.create(mark.attrs ?? null).attrs
  }
  return attributes
}

/** Text runs of parsed inline nodes (text only; a hard break is a line break character here). */
export function textRuns(nodes: readonly DocNode[]): TextRun[] {
  return nodes.map((node) => ({
    text: node.type === 'text' ? (node.text ?? '') : '\n',
    attributes: node.type === 'text' ? marksToTextAttributes(node.marks) : {},
  }))
}

type Op = { insert: unknown; attributes?: TextAttributes }

/** The attributes of every character of `text[index, index + length)`, one entry per UTF-16 unit. */
function attributesOf(text: Y.XmlText, index: number, length: number): TextAttributes[] {
  const out: TextAttributes[] = []
  let offset = 0
  for (const op of text.toDelta() as Op[]) {
    if (typeof op.insert !== 'string') continue
    const end = offset + op.insert.length
    const from = Math.max(offset, index)
    const to = Math.min(end, index + length)
    for (let i = from; i < to; i++) out.push(op.attributes ?? {})
    offset = end
    if (offset >= index + length) break
  }
  return out
}

/** Whether two values of mark `key` show the same in Markdown (a link by its target and title). */
function sameVisible(key: string, a: unknown, b: unknown): boolean {
  if (key !== 'link') return true
  const left = (a ?? {}) as Record<string, unknown>
  const right = (b ?? {}) as Record<string, unknown>
  return sameHref(left.href, right.href) && (left.title ?? null) === (right.title ?? null)
}

/**
 * Whether two link targets are the same once percent-encoding is undone: Markdown read back encodes what
 * the document may hold as written (`Ramer–Douglas` is read back as `Ramer%E2%80%93Douglas`).
 */
function sameHref(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (typeof a !== 'string' || typeof b !== 'string') return false
  const decode = (href: string) => {
    try {
      return decodeURIComponent(href)
    } catch {
      return href
    }
  }
  return decode(a) === decode(b)
}

/**
 * The formatting of a new character: `base` (the text it replaces there) with the controlled marks as the
 * new run says; a controlled mark both have, looking the same, keeps its stored value (a highlight's
 * colour, a link's target window), since Markdown cannot show the difference.
 */
function finalAttributes(
  base: TextAttributes,
  wanted: TextAttributes,
  controlled: Controlled,
): TextAttributes {
  const out: TextAttributes = {}
  const decides = (key: string) => controlled === 'all' || controlled.has(key)
  for (const [key, value] of Object.entries(base)) if (value != null && !decides(key)) out[key] = value
  for (const [key, value] of Object.entries(wanted)) {
    if (value == null || !decides(key)) continue
    out[key] = base[key] != null && sameVisible(key, base[key], value) ? base[key] : value
  }
  return out
}

const sameAttributes = (a: TextAttributes, b: TextAttributes) => stableJSON(clean(a)) === stableJSON(clean(b))

function clean(attributes: TextAttributes): TextAttributes {
  const out: TextAttributes = {}
  for (const [key, value] of Object.entries(attributes)) if (value != null) out[key] = value
  return out
}

/** What `format` must set to turn `from` into `to`: changed keys, and null for the ones `to` drops. */
function formatChange(from: TextAttributes, to: TextAttributes): TextAttributes {
  const change: TextAttributes = {}
  for (const key of new Set([...Object.keys(from), ...Object.keys(to)])) {
    const before = from[key] ?? null
    const after = to[key] ?? null
    if (stableJSON(before) !== stableJSON(after)) change[key] = after
  }
  return change
}

/**
 * Rewrites `text[index, index + length)` into `runs`, changing only what differs. Kept characters keep
 * their items; a kept character whose controlled marks change is re-formatted in place. A new character
 * takes the formatting of the old character at the same place in its hunk (the last one, when the hunk
 * grows), or for a pure insertion the character before it in the range (the one after, at its start).
 * Call inside a transaction. Returns whether anything changed.
 */
export function rewriteText(
  text: Y.XmlText,
  index: number,
  length: number,
  runs: readonly TextRun[],
  controlled: Controlled,
): boolean {
  const oldAttributes = attributesOf(text, index, length)
  const oldString = plainSlice(text, index, length)
  let newString = ''
  const wanted: TextAttributes[] = []
  for (const run of runs) {
    newString += run.text
    for (let i = 0; i < run.text.length; i++) wanted.push(run.attributes)
  }
  const hunks = diffText(oldString, newString)
  const outside: TextAttributes = {}
  const baseOf = (aStart: number, aEnd: number, offset: number): TextAttributes => {
    if (aEnd > aStart) return oldAttributes[Math.min(aStart + offset, aEnd - 1)] ?? outside
    return oldAttributes[aStart > 0 ? aStart - 1 : 0] ?? outside
  }
  let changed = false
  /** Equal characters a[aFrom, aTo) ↔ b[bFrom, …): re-format runs whose controlled marks change. */
  const reformat = (aFrom: number, aTo: number, bFrom: number) => {
    let at = aTo - 1
    while (at >= aFrom) {
      const before = oldAttributes[at]!
      const after = finalAttributes(before, wanted[bFrom + (at - aFrom)]!, controlled)
      if (sameAttributes(before, after)) {
        at--
        continue
      }
      const change = formatChange(before, after)
      let start = at
      while (
        start > aFrom &&
        oldAttributes[start - 1] === before &&
        sameAttributes(finalAttributes(before, wanted[bFrom + (start - 1 - aFrom)]!, controlled), after)
      )
        start--
      text.format(index + start, at - start + 1, change)
      changed = true
      at = start - 1
    }
  }
  // Right to left: every change leaves the positions before it valid.
  let aNext = oldString.length
  for (let h = hunks.length - 1; h >= 0; h--) {
    const hunk = hunks[h]!
    reformat(hunk.aEnd, aNext, hunk.bEnd)
    if (hunk.aEnd > hunk.aStart) text.delete(index + hunk.aStart, hunk.aEnd - hunk.aStart)
    let pos = index + hunk.aStart
    let from = hunk.bStart
    while (from < hunk.bEnd) {
      const attributes = finalAttributes(
        baseOf(hunk.aStart, hunk.aEnd, from - hunk.bStart),
        wanted[from]!,
        controlled,
      )
      let to = from + 1
      while (
        to < hunk.bEnd &&
        sameAttributes(
          finalAttributes(baseOf(hunk.aStart, hunk.aEnd, to - hunk.bStart), wanted[to]!, controlled),
          attributes,
        )
      )
        to++
      // Yjs fills in null for every attribute active at the position that this object leaves out.
      text.insert(pos, newString.slice(from, to), { ...attributes })
      pos += to - from
      from = to
    }
    changed = true
    aNext = hunk.aStart
  }
  reformat(0, aNext, 0)
  return changed
}

/** The characters of `text[index, index + length)` (text runs only, as `yTextString` counts them). */
function plainSlice(text: Y.XmlText, index: number, length: number): string {
  let out = ''
  let offset = 0
  for (const op of text.toDelta() as Op[]) {
    if (typeof op.insert !== 'string') continue
    const end = offset + op.insert.length
    if (end > index && offset < index + length)
      out += op.insert.slice(Math.max(0, index - offset), Math.min(op.insert.length, index + length - offset))
    offset = end
    if (offset >= index + length) break
  }
  return out
}
