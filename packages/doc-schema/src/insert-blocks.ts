/**
 * The one block-by-block insert of a new document's blocks into its fragment, shared by the whole build
 * (`writeImportedParts`) and the build in parts (`importedStateInParts`), so the two write the same items in
 * the same order and the batching rule has one home. Yjs gives an element inserted after the last one the
 * same id, origins and clocks as it would in one insert of them all (items are integrated one after another
 * either way, each child right after its parent), so the update is the same as building every block first.
 */
import type { Node as PMNode } from '@tiptap/pm/model'
import * as Y from 'yjs'
import { ok, type Result } from './result.ts'
import { LIST_ITEMS_PER_RENDER } from './sections/section-total.ts'
import { nodeToY } from './yjs/build-y.ts'

/**
 * Children of one block built into Yjs between two calls of `built` (a long list, a long quote): a render's
 * worth of list items, so a long list's batch is what `DerivedStream.listItems` measures at a time.
 */
export const BUILD_BATCH_CHILDREN = LIST_ITEMS_PER_RENDER

/**
 * A piece of a long list read a slice at a time (import-markdown.ts): `list` is a node of the list's type
 * and attributes (holding its first item), `from` the index of the piece's first item in the list, `last`
 * true on the list's last piece. The pieces of one list come one after another, every piece but the last
 * BUILD_BATCH_CHILDREN items (the last may hold none), and only for a list of more than that: the same
 * items, batches and order as the list built whole.
 */
export type ListPiece = { list: PMNode; from: number; items: PMNode[]; last: boolean }

/** What a part of an import holds: whole blocks, or a piece of a long list. */
export type ImportPart = PMNode[] | ListPiece

/** What a caller does as the blocks go in (the build in parts measures and lets go of them). */
export interface InsertHooks {
  /** A block built whole, once it is inserted and counted. */
  block?(element: Y.XmlElement): void
  /**
   * A block of many children, its element inserted before them: what to do after each batch of children
   * (`from` the index of the batch's first) and once its attributes are set. `whole` is the block when it
   * came whole, null for a long list that comes in pieces (its items all list items, within the nesting
   * the import allows a list measured in parts).
   */
  long?(
    name: string,
    element: Y.XmlElement,
    attrs: Record<string, unknown>,
    whole: PMNode | null,
  ): { batch?(children: Y.XmlElement[], from: number): void; close?(): void }
}

/**
 * An insert of blocks at the end of `fragment`, each block inserted after the one before as it is built
 * (and its node let go from the array); `built` is called with how many blocks (or a long block's children)
 * are built so far (the worker collects its garbage).
 */
export function blockInserter(
  fragment: Y.XmlFragment,
  built?: (blocks: number) => void,
  hooks: InsertHooks = {},
): (part: ImportPart) => void {
  let last: Y.XmlElement | null = null
  let count = 0
  type Open = {
    element: Y.XmlElement
    attrs: Record<string, unknown>
    child: Y.XmlElement | null
    long: ReturnType<NonNullable<InsertHooks['long']>> | undefined
  }
  let open: Open | null = null
  // A block of many children (a list of 75,000 items): the element first, then its children in batches,
  // then its attributes, the order in which Yjs integrates a detached element (its content, then its
  // attributes), so the same ids; the batches' detached copies go between two batches.
  const openLong = (node: PMNode, whole: PMNode | null): Open => {
    const element = new Y.XmlElement(node.type.name)
    fragment.insertAfter(last, [element])
    last = element
    const attrs: Record<string, unknown> = {}
    for (const [key, value] of Object.entries(node.attrs))
      if (value !== null && value !== undefined) attrs[key] = value
    return { element, attrs, child: null, long: hooks.long?.(node.type.name, element, attrs, whole) }
  }
  const batch = (state: Open, children: PMNode[], from: number) => {
    if (children.length === 0) return
    const elements = children.map((child) => nodeToY(child))
    state.element.insertAfter(state.child, elements)
    state.child = elements.at(-1)!
    count += elements.length
    built?.(count)
    state.long?.batch?.(elements, from)
  }
  const closeLong = (state: Open) => {
    fragment.doc!.transact(() => {
      for (const [key, value] of Object.entries(state.attrs)) state.element.setAttribute(key, value as string)
    })
    state.long?.close?.()
  }
  return (part) => {
    if (!Array.isArray(part)) {
      if (part.from === 0) open = openLong(part.list, null)
      batch(open!, part.items, part.from)
      part.items = []
      if (part.last) {
        closeLong(open!)
        open = null
      }
      return
    }
    const blocks = part
    for (let i = 0; i < blocks.length; i++) {
      const node = blocks[i]!
      ;(blocks as (PMNode | undefined)[])[i] = undefined
      if (node.inlineContent || node.childCount <= BUILD_BATCH_CHILDREN) {
        const element = nodeToY(node)
        fragment.insertAfter(last, [element])
        last = element
        count++
        built?.(count)
        hooks.block?.(element)
        continue
      }
      const state = openLong(node, node)
      for (let from = 0; from < node.childCount; from += BUILD_BATCH_CHILDREN) {
        const children: PMNode[] = []
        const to = Math.min(node.childCount, from + BUILD_BATCH_CHILDREN)
        for (let c = from; c < to; c++) children.push(node.child(c))
        batch(state, children, from)
      }
      closeLong(state)
    }
  }
}

/** Inserts the title's blocks, then each part's as it comes; a part's refusal ends it and is returned. */
export function insertParts(
  insert: (part: ImportPart) => void,
  title: PMNode[],
  parts: Iterable<Result<ImportPart>>,
): Result<void> {
  insert(title)
  for (const part of parts) {
    if (part.kind === 'error') return part
    insert(part.value)
  }
  return ok(undefined)
}
