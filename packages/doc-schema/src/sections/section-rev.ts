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

function hashElement(hash: ContentHash, element: Y.XmlElement, isSectionHeading: boolean) {
  hash.update('<').update(element.nodeName)
  const attrs = element.getAttributes() as Record<string, unknown>
  for (const key of Object.keys(attrs).sort()) {
    if (isSectionHeading && key === HEADING_ID_ATTR) continue
    hash.update(' ').update(key).update('=').update(stableJSON(attrs[key]))
  }
  hash.update('>')
  for (const child of element.toArray() as YChild[]) {
    if (child instanceof Y.XmlElement) hashElement(hash, child, false)
    else if (child instanceof Y.XmlText) hashText(hash, child)
  }
  hash.update('</>')
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

/** JSON with object keys sorted, so attribute order never changes a rev. */
export function stableJSON(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null'
  if (Array.isArray(value)) return `[${value.map(stableJSON).join(',')}]`
  const record = value as Record<string, unknown>
  const keys = Object.keys(record)
    .filter((key) => record[key] !== undefined)
    .sort()
  return `{${keys.map((key) => `${JSON.stringify(key)}:${stableJSON(record[key])}`).join(',')}}`
}
