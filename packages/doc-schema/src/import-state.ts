/**
 * An imported file's Yjs state built a part at a time, each part encoded and let go once it is measured
 * (the import worker): the finished document of a 20 MiB file or of 300,000 elements held ~100-145 MB of
 * Yjs items beside the parse, and its encoding 22 MB more. Here the document is built block by block as
 * `writeImportedParts` builds it (a long list a batch of items at a time), each block (or batch) handed to
 * a `DerivedStream` (its outline and search text measured), its structs written out, and then every item
 * built so far is dropped from the document but the ones the next insert hangs on (the last top-level
 * block and, inside a long list, the list and its last item). The state is those parts joined under one
 * header: the same bytes as `Y.encodeStateAsUpdate` of the whole document (`importedPartsUpdate`), since a
 * new document has one client, no deletions, and no two blocks' items ever merge (each block and list item
 * starts with an element).
 */
import type { Node as PMNode } from '@tiptap/pm/model'
import * as Y from 'yjs'
import { buildDocumentBlocks } from './create-document.ts'
import { blockInserter, type ImportPart, insertParts } from './insert-blocks.ts'
import { editorSchema } from './lazy-libs.ts'
import { FRAGMENT_NAME, MAX_DOCUMENT_BYTES, MAX_NESTING_DEPTH } from './limits.ts'
import { ok, type Result, refuseFor } from './result.ts'
import type { DerivedStream } from './sections/derived-stream.ts'
import { newStateOverStructs } from './yjs/document-structs.ts'

/** Structs built before they are written out and let go (a part; a long list's batch is always one). */
const PART_STRUCTS = 2_048

const LIST_TYPES = new Set(['bulletList', 'orderedList', 'taskList'])
const ITEM_TYPES = new Set(['listItem', 'taskItem'])

/**
 * Builds the title heading and the body's parts into a new document's state, each block measured by
 * `derived` before it is let go. A part's refusal ends it; so does a state over MAX_DOCUMENT_BYTES.
 */
export function importedStateInParts(
  imported: { title: string; parts: Iterable<Result<ImportPart>> },
  derived: DerivedStream,
  /** Called as blocks (or a long block's children) are built, with how many are (the worker collects its garbage). */
  built?: (blocks: number) => void,
  /** The document's client id (a test compares states); a random one otherwise, as Y.Doc draws it. */
  clientID?: number,
): Result<Uint8Array> {
  const heading = buildDocumentBlocks(imported.title)
  if (heading.kind === 'error') return heading
  const doc = new Y.Doc()
  if (clientID !== undefined) doc.clientID = clientID
  const writer = partWriter(doc)
  const fragment = doc.getXmlFragment(FRAGMENT_NAME)
  const title = heading.value.map((block) => editorSchema().nodeFromJSON(block))
  const insert = blockInserter(fragment, built, {
    block(element) {
      derived.block(element)
      if (writer.structs() >= PART_STRUCTS) writer.release(fragment, element)
    },
    // A long list is measured and let go a batch at a time; another such block (rare: a quote of 1,000
    // paragraphs) is measured whole.
    long(name, element, attrs, whole) {
      // A list in pieces is always measured in parts (the import reads in slices only such lists).
      const inParts = whole === null || measuredInParts(whole)
      if (inParts) derived.listOpen(name, attrs)
      return {
        batch: inParts
          ? (children, from) => {
              derived.listItems(children, from)
              writer.release(fragment, element, children.at(-1))
            }
          : undefined,
        close() {
          if (inParts) derived.listClose()
          else derived.block(element)
          writer.release(fragment, element)
        },
      }
    },
  })
  const inserted = insertParts(insert, title, imported.parts)
  if (inserted.kind === 'error') {
    doc.destroy()
    return inserted
  }
  const state = writer.finish()
  doc.destroy()
  if (state.length > MAX_DOCUMENT_BYTES) {
    return refuseFor(
      'too_large',
      `markdown: the document would hold ${state.length} bytes of state, over ${MAX_DOCUMENT_BYTES}; split the file into several documents.`,
      'markdown',
    )
  }
  return newStateOverStructs(state) ?? ok(state)
}

/**
 * Whether a long block is measured a batch of children at a time (`derivedStream.listOpen`): what
 * `elementReadLength` measures in parts, a list of items only, within the render ceiling.
 */
function measuredInParts(node: PMNode): boolean {
  if (!LIST_TYPES.has(node.type.name)) return false
  for (let c = 0; c < node.childCount; c++) if (!ITEM_TYPES.has(node.child(c).type.name)) return false
  // yElementTooDeep: an element below the list (itself level 1) deeper than MAX_NESTING_DEPTH; text is no level.
  const stack: Array<[PMNode, number]> = [[node, 1]]
  for (let entry = stack.pop(); entry !== undefined; entry = stack.pop()) {
    const [current, level] = entry
    if (level > MAX_NESTING_DEPTH) return false
    current.forEach((child) => {
      if (!child.isText) stack.push([child, level + 1])
    })
  }
  return true
}

/**
 * Writes a new document's structs out as they are built and lets go of them (see the file's header); the
 * document's one client, so its store holds one array: a GC struct standing for what was let go, then the
 * structs built since.
 */
function partWriter(doc: Y.Doc) {
  const client = doc.clientID
  const parts: Uint8Array[] = []
  let written = 0
  const structs = () => doc.store.clients.get(client) ?? []
  const fresh = () => (structs()[0] instanceof Y.GC ? 1 : 0)
  /** Writes the structs built since the last write as a part; false when there are none. */
  const write = () => {
    const all = structs()
    const from = fresh()
    if (all.length === from) return false
    const encoder = new Y.UpdateEncoderV1()
    for (let i = from; i < all.length; i++) all[i]!.write(encoder, 0)
    parts.push(encoder.toUint8Array())
    written += all.length - from
    return true
  }
  return {
    /** Structs built since the last release. */
    structs: () => structs().length - fresh(),
    /**
     * Writes the structs built since the last release, then lets go of every item but `block` (the last
     * top-level block, what the next one is inserted after) and, inside it, `child` (the last item of a
     * long list being built).
     */
    release(fragment: Y.XmlFragment, block: Y.XmlElement, child?: Y.XmlElement) {
      if (!write()) return
      doc.store.clients.set(client, [new Y.GC(Y.createID(client, 0), Y.getState(doc.store, client))])
      // Unlinked from the items before them, nothing reaches the items let go.
      const blockItem = block._item!
      blockItem.left = null
      fragment._start = blockItem
      if (child) {
        const childItem = child._item!
        childItem.left = null
        block._start = childItem
      }
    },
    /** The state: the parts under the header `Y.encodeStateAsUpdate` writes, then an empty delete set. */
    finish(): Uint8Array {
      write()
      const header = new Y.UpdateEncoderV1()
      header.writeLen(1) // one client
      header.writeLen(written)
      header.writeClient(client)
      header.writeLen(0) // from clock 0
      const head = header.toUint8Array()
      const state = new Uint8Array(head.length + parts.reduce((sum, part) => sum + part.length, 0) + 1)
      state.set(head, 0)
      let at = head.length
      for (let i = 0; i < parts.length; i++) {
        state.set(parts[i]!, at)
        at += parts[i]!.length
        parts[i] = new Uint8Array(0)
      }
      state[at] = 0 // no deletions
      return state
    },
  }
}
