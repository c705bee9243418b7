import * as Y from 'yjs'
import { createDocumentUpdate } from '../create-document.ts'
import { FRAGMENT_NAME, MAX_IMPORT_ELEMENTS } from '../limits.ts'
import type { Result } from '../result.ts'

/**
 * A Y.Doc holding a new document, as a store would load it from its first update. Fixtures may be larger
 * than one write (MAX_WRITE_ELEMENTS): they are built with an import's element ceiling.
 */
export function loadDocument(title: string, markdown?: string): { doc: Y.Doc; fragment: Y.XmlFragment } {
  const update = createDocumentUpdate(title, markdown, { elements: MAX_IMPORT_ELEMENTS })
  if (update.kind === 'error')
    throw new Error(`fixture refused: ${update.reason ?? update.code}: ${update.message}`)
  const doc = new Y.Doc()
  Y.applyUpdate(doc, update.value)
  return { doc, fragment: doc.getXmlFragment(FRAGMENT_NAME) }
}

/** A copy of a Y.Doc through its encoded state, as another process would see it. */
export function cloneDocument(doc: Y.Doc): { doc: Y.Doc; fragment: Y.XmlFragment } {
  const copy = new Y.Doc()
  Y.applyUpdate(copy, Y.encodeStateAsUpdate(doc))
  return { doc: copy, fragment: copy.getXmlFragment(FRAGMENT_NAME) }
}

/** What `editor` changes, as the update a sync message to the holder of `server` would carry. */
export function changeOf(server: Y.Doc, editor: Y.Doc, change: () => void): Uint8Array {
  const before = Y.encodeStateVector(server)
  editor.transact(change)
  return Y.encodeStateAsUpdate(editor, before)
}

export function expectOk<T>(result: Result<T>): T {
  if (result.kind === 'error')
    throw new Error(`expected ok, got ${result.reason ?? result.code}: ${result.message}`)
  return result.value
}

export const SAMPLE_MARKDOWN = `Intro paragraph with **bold**, *italic*, ~~strike~~, <u>underline</u>, <mark>highlight</mark>, H<sub>2</sub>O, x<sup>2</sup>, \`code\` and a [link](https://example.com "Example").

## Lists

- one
- two
  - nested

1. first
2. second

- [ ] todo
- [x] done

## Other blocks

> a quote

\`\`\`ts
const answer = 42
\`\`\`

---

| name | value |
| :--- | ----: |
| a \\| b | 1 |

![diagram](https://example.com/d.png "Diagram")

https://www.youtube.com/watch?v=dQw4w9WgXcQ

https://example.com/talk.mp3

### Deep

line one\\
line two
`

/** Unicode that breaks naive code: ZWJ emoji, CJK, RTL, combining marks, astral characters. */
export const UNICODE_WORDS = [
  '👩‍👩‍👧‍👦',
  '漢字かな',
  'שלום עולם',
  'مرحبا',
  'e\u0301',
  '𝔘𝔫𝔦',
  '🏳️‍🌈',
  'Å',
  '\u200f',
]
