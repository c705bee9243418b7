import type * as Y from 'yjs'
import { HEADING_ID_ATTR } from '../limits.ts'
import { ELEMENT, TEXT, type TreeSource, Y_TREE } from '../yjs/tree-source.ts'
import { ContentHash } from './content-hash.ts'

/** Length of a rev in hex characters. */
export const REV_LENGTH = 12

/** What one walk over a section gives: its rev and its size. */
export type SectionStats = {
  rev: string
  /**
   * About how many characters a read shows of the section: its text, plus an estimate of what Markdown
   * adds (SIZE_COSTS). Counted during the rev's hash walk, so it costs no walk of its own; rendering the
   * Markdown to count it exactly costs ~2 µs a character.
   */
  size: number
}

/**
 * The rev of a section: a hash of its heading and blocks as stored in Yjs (types, attributes, text, marks,
 * order). The heading's id is left out (it names the section, it is not content); adjacent text runs with
 * the same marks are merged, so how Yjs happened to split them does not matter.
 */
export function sectionRev(heading: Y.XmlElement, blocks: readonly Y.XmlElement[]): string {
  return sectionStats(heading, blocks).rev
}

/** The rev and the size of a section, from one walk. */
export function sectionStats(heading: Y.XmlElement, blocks: readonly Y.XmlElement[]): SectionStats {
  const stream = sectionStatsStream(heading)
  for (const block of blocks) stream.block(block)
  return stream.done()
}

/** `sectionStats` of a section read through `source` (a stored state read flat): the same rev and size. */
export function sectionStatsOf<N>(source: TreeSource<N>, heading: N, blocks: readonly N[]): SectionStats {
  const hash = new ContentHash()
  const size = { chars: 0 }
  hashElement(source, hash, size, heading, true)
  for (const block of blocks) hashElement(source, hash, size, block, false)
  return { rev: hash.digest().slice(0, REV_LENGTH), size: size.chars }
}

/**
 * `sectionStats` fed a block at a time, for a builder that lets go of each block once it is hashed (the
 * import worker): the same walk, so the same rev and size. A long list may be fed in parts: `listOpen` with
 * its name and attributes, its items in order (`listItem`), then `listClose`.
 */
export function sectionStatsStream(heading: Y.XmlElement): {
  block(block: Y.XmlElement): void
  listOpen(nodeName: string, attrs: Record<string, unknown>): void
  listItem(item: Y.XmlElement): void
  listClose(): void
  done(): SectionStats
} {
  const hash = new ContentHash()
  const size = { chars: 0 }
  hashElement(Y_TREE, hash, size, heading, true)
  return {
    block: (block) => hashElement(Y_TREE, hash, size, block, false),
    listOpen(nodeName, attrs) {
      // hashElement's opening of a top-level element that has children, its attributes sorted.
      hash.update('<').update(nodeName)
      for (const key of Object.keys(attrs).sort())
        hash.update(' ').update(key).update('=').update(stableJSON(attrs[key]))
      hash.update('>')
      size.chars += SIZE_COSTS.topLevelBlock
    },
    listItem: (item) => hashElement(Y_TREE, hash, size, item, false, true),
    listClose: () => hash.update('</>'),
    done: () => ({ rev: hash.digest().slice(0, REV_LENGTH), size: size.chars }),
  }
}

/**
 * What a section read adds to the text, estimated per node (the size is a guide for choosing a read, not a
 * count to rely on): a section read numbers each top-level block (`[n] `) and separates blocks by a blank
 * line; a heading adds its `#`s and a space; a nested element (list item, table cell, paragraph in a
 * list) about two characters of markers and line breaks; a mark its delimiters (a link its `[…](href)`);
 * media shows as a `[image: alt]` or `[video: src]` placeholder.
 */
const SIZE_COSTS = {
  topLevelBlock: 6,
  nestedElement: 2,
  mark: 2,
  link: 4,
  mediaPlaceholder: 9,
} as const

/** A closing tag, queued after an element's children. */
const CLOSE = Symbol('close')

/**
 * Hashes an element, its attributes and everything under it in document order, and adds its estimated
 * size to `size`. Iterative (an explicit stack), so a document's nesting depth never becomes the call
 * stack's.
 */
function hashElement<N>(
  source: TreeSource<N>,
  hash: ContentHash,
  size: { chars: number },
  element: N,
  isSectionHeading: boolean,
  /** `element` is a child of a top-level block (a long list's item fed on its own), not a block. */
  nested = false,
) {
  const stack: Array<N | typeof CLOSE> = [element]
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    if (node === CLOSE) {
      hash.update('</>')
      continue
    }
    const kind = source.kind(node)
    if (kind === TEXT) hashText(source, hash, size, node)
    else if (kind === ELEMENT) {
      const name = source.name(node)
      hash.update('<').update(name)
      const attrs = source.attributes(node)
      for (const key of Object.keys(attrs).sort()) {
        if (isSectionHeading && node === element && key === HEADING_ID_ATTR) continue
        hash.update(' ').update(key).update('=').update(stableJSON(attrs[key]))
      }
      hash.update('>')
      stack.push(CLOSE)
      const children = source.children(node)
      size.chars += elementCost(name, node === element && !nested, children.length, attrs)
      for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!)
    }
  }
}

/** The estimated characters an element adds around its text (SIZE_COSTS). */
function elementCost(
  name: string,
  topLevel: boolean,
  childCount: number,
  attrs: Record<string, unknown>,
): number {
  if (name === 'heading') {
    // `## ` before its text; a read neither numbers the section's heading nor puts a blank line before it.
    const level = Number(attrs.level)
    return (Number.isInteger(level) && level >= 1 && level <= 6 ? level : 1) + 1
  }
  let cost = topLevel ? SIZE_COSTS.topLevelBlock : SIZE_COSTS.nestedElement
  if (childCount === 0) {
    // Media: the placeholder a read shows (an image by its alt text, an embed by its URL).
    const shown = name === 'image' ? attrs.alt : attrs.src
    if (typeof shown === 'string') cost += SIZE_COSTS.mediaPlaceholder + shown.length
  }
  return cost
}

function hashText<N>(source: TreeSource<N>, hash: ContentHash, size: { chars: number }, text: N) {
  let runText = ''
  let runFormat = ''
  const flush = () => {
    if (runText === '') return
    // Lengths make the encoding unambiguous whatever characters the text holds.
    hash.update(`"${runFormat.length}:${runFormat}${runText.length}:`).update(runText)
    runText = ''
  }
  for (const op of source.delta(text)) {
    if (typeof op.insert !== 'string') continue
    size.chars += op.insert.length
    if (op.attributes) size.chars += marksCost(op.attributes, op.insert)
    const format = stableJSON(op.attributes ?? {})
    if (format !== runFormat) {
      flush()
      runFormat = format
    }
    runText += op.insert
  }
  flush()
}

/**
 * The estimated delimiters of one run's marks: a link's brackets and URL (none when its text is its URL,
 * which Markdown shows bare), two characters for any other.
 */
function marksCost(marks: Record<string, unknown>, text: string): number {
  let cost = 0
  for (const key in marks) {
    const value = marks[key]
    if (value === undefined || value === null) continue
    const href = key === 'link' && typeof value === 'object' ? (value as { href?: unknown }).href : undefined
    if (typeof href !== 'string') cost += SIZE_COSTS.mark
    else if (href !== text) cost += SIZE_COSTS.link + href.length
  }
  return cost
}

/**
 * JSON with object keys sorted, so attribute order never changes a rev. Iterative (an explicit stack of
 * values to write and literal text), so a value's nesting depth is not the call stack's.
 */
export function stableJSON(value: unknown): string {
  const out: string[] = []
  const stack: Array<{ value: unknown } | string> = [{ value }]
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    if (typeof item === 'string') {
      out.push(item)
      continue
    }
    const current = item.value
    if (current === null || typeof current !== 'object') {
      out.push(JSON.stringify(current) ?? 'null')
    } else if (Array.isArray(current)) {
      stack.push(']')
      for (let i = current.length - 1; i >= 0; i--) {
        // A hole in a sparse array writes nothing, as Array.prototype.map and join do.
        stack.push(i in current ? { value: current[i] } : '')
        if (i > 0) stack.push(',')
      }
      out.push('[')
    } else {
      const record = current as Record<string, unknown>
      const keys = Object.keys(record)
        .filter((key) => record[key] !== undefined)
        .sort()
      stack.push('}')
      for (let i = keys.length - 1; i >= 0; i--) {
        stack.push({ value: record[keys[i]!] })
        stack.push(`${i > 0 ? ',' : ''}${JSON.stringify(keys[i])}:`)
      }
      out.push('{')
    }
  }
  return out.join('')
}
