import * as Y from 'yjs'
import { HEADING_ID_ATTR } from '../limits.ts'
import { ContentHash } from './content-hash.ts'

type YChild = Y.XmlElement | Y.XmlText | Y.XmlHook

/** Length of a rev in hex characters. */
export const REV_LENGTH = 12

/**
 * The rev of a section: a hash of its heading and blocks as stored in Yjs (types, attributes, text, marks,
 * order). The heading's id is left out (it names the section, it is not content); adjacent text runs with
 * the same marks are merged, so how Yjs happened to split them does not matter.
 */
export function sectionRev(heading: Y.XmlElement, blocks: readonly Y.XmlElement[]): string {
  const hash = new ContentHash()
  hashElement(hash, heading, true)
  for (const block of blocks) hashElement(hash, block, false)
  return hash.digest().slice(0, REV_LENGTH)
}

/** A closing tag, queued after an element's children. */
const CLOSE = Symbol('close')

/**
 * Hashes an element, its attributes and everything under it in document order. Iterative (an explicit
 * stack), so a document's nesting depth never becomes the call stack's.
 */
function hashElement(hash: ContentHash, element: Y.XmlElement, isSectionHeading: boolean) {
  const stack: Array<YChild | typeof CLOSE> = [element]
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    if (node === CLOSE) hash.update('</>')
    else if (node instanceof Y.XmlText) hashText(hash, node)
    else if (node instanceof Y.XmlElement) {
      hash.update('<').update(node.nodeName)
      const attrs = node.getAttributes() as Record<string, unknown>
      for (const key of Object.keys(attrs).sort()) {
        if (isSectionHeading && node === element && key === HEADING_ID_ATTR) continue
        hash.update(' ').update(key).update('=').update(stableJSON(attrs[key]))
      }
      hash.update('>')
      stack.push(CLOSE)
      const children = node.toArray() as YChild[]
      for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!)
    }
  }
}

function hashText(hash: ContentHash, text: Y.XmlText) {
  let runText = ''
  let runFormat = ''
  const flush = () => {
    if (runText === '') return
    // Lengths make the encoding unambiguous whatever characters the text holds.
    hash.update(`"${runFormat.length}:${runFormat}${runText.length}:`).update(runText)
    runText = ''
  }
  for (const op of text.toDelta() as { insert: unknown; attributes?: Record<string, unknown> }[]) {
    if (typeof op.insert !== 'string') continue
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
