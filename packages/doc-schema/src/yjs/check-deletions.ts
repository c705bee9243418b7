/**
 * The deletions of an editor update, checked against the live document before it is applied (the other
 * half of the editor-update check, check-update.ts): an editor may delete only what it can represent, so
 * removing an element of a node type, a mark of a mark type, or anything inside such an element, that the
 * connection did not declare (`EditorTypes`) is refused. Each deleted item is looked up once and its
 * ancestors are walked with a loop and remembered, so the cost follows the deletion. Heading ids an
 * editor strips are reported, and put back after the update with `restoreHeadingIds`.
 */
import * as Y from 'yjs'
import { EDITOR_TYPES_PARAM, type EditorTypes, knowsType } from '../editor-types.ts'
import { isHeadingId } from '../heading-id.ts'
import { HEADING_ID_ATTR } from '../limits.ts'

/** A heading whose id an update removes, and the id it had. */
export type StrippedId = { heading: Y.XmlElement; id: string }

/** A decoded update's delete set: per client, the clock ranges it deletes. */
export type DeleteRanges = { clients: Map<number, Array<{ clock: number; len: number }>> }

/** Longest mark-key suffix y-tiptap writes for overlapping marks of one type (`link--<hash>`). */
export const MARK_KEY = /^([A-Za-z][A-Za-z0-9_]*)(--[A-Za-z0-9+/=]{1,64})?$/

/**
 * A node or mark name as it may appear in a close reason: ASCII, and at most 16 characters (the schema's
 * longest is 14), so the whole reason fits a WebSocket close frame (123 bytes) with its hint intact.
 */
const shown = (name: string) => name.replace(/[^A-Za-z0-9_-]/g, '?').slice(0, 16)

const lacks = (name: string) => ({
  ok: false as const,
  reason: `would delete ${shown(name)}, which this editor lacks; declare its types with ?${EDITOR_TYPES_PARAM}= (docs/server.md)`,
  undeclaredType: name,
})

/**
 * The deletions of an update, against the live document before it is applied: refused when one removes
 * content of a type the editor did not declare; otherwise the heading ids it strips.
 */
export function checkDeletions(
  doc: Y.Doc,
  ds: DeleteRanges,
  types: EditorTypes,
): { ok: true; strippedIds: StrippedId[]; examined: number } | ReturnType<typeof lacks> {
  const strippedIds: StrippedId[] = []
  let examined = 0
  // Per shared type: the undeclared node type it is or sits inside, or null (all its ancestors declared).
  const verdicts = new Map<Y.AbstractType<unknown>, string | null>()
  const undeclaredAround = (start: Y.AbstractType<unknown>): string | null => {
    const path: Y.AbstractType<unknown>[] = []
    let type: Y.AbstractType<unknown> | null = start
    let verdict: string | null = null
    while (type) {
      const known = verdicts.get(type)
      if (known !== undefined) {
        verdict = known
        break
      }
      examined++
      path.push(type)
      if (type instanceof Y.XmlElement && !knowsType(types, type.nodeName)) {
        verdict = type.nodeName
        break
      }
      const item: Y.Item | null = type._item
      type = item && item.parent instanceof Y.AbstractType ? item.parent : null
    }
    for (const seen of path) verdicts.set(seen, verdict)
    return verdict
  }

  for (const [client, ranges] of ds.clients) {
    const structs = doc.store.clients.get(client)
    if (!structs || structs.length === 0) continue
    const last = structs[structs.length - 1]!
    const known = last.id.clock + last.length
    for (const range of ranges) {
      const end = Math.min(range.clock + range.len, known)
      if (range.clock >= end) continue // content the server does not have: nothing of it to lose
      for (let i = Y.findIndexSS(structs, range.clock); i < structs.length; i++) {
        const struct = structs[i]!
        if (struct.id.clock >= end) break
        examined++
        if (!(struct instanceof Y.Item) || struct.deleted) continue
        const content = struct.content
        if (content instanceof Y.ContentType) {
          const type = content.type
          if (type instanceof Y.XmlElement && !knowsType(types, type.nodeName)) return lacks(type.nodeName)
        } else if (content instanceof Y.ContentFormat) {
          const mark = MARK_KEY.exec(content.key)?.[1] ?? content.key
          if (!knowsType(types, mark)) return lacks(mark)
        }
        const parent = struct.parent
        if (!(parent instanceof Y.AbstractType)) continue
        const around = undeclaredAround(parent)
        if (around !== null) return lacks(around)
        if (
          struct.parentSub === HEADING_ID_ATTR &&
          parent instanceof Y.XmlElement &&
          parent.nodeName === 'heading' &&
          content instanceof Y.ContentAny &&
          isHeadingId(content.arr[content.arr.length - 1])
        )
          strippedIds.push({ heading: parent, id: content.arr[content.arr.length - 1] as string })
      }
    }
  }
  return { ok: true, strippedIds, examined }
}

/**
 * After an update `checkEditorUpdate` reported `stripped` for is applied: each heading still there and
 * left without any id (not given another one) gets back the id it had. Call it before `repairHeadingIds`:
 * a heading the same update created or re-labelled with that id then gets a fresh one, and the restored
 * heading keeps its section id (and its chat room). One transaction with `origin`; returns how many.
 */
export function restoreHeadingIds(stripped: readonly StrippedId[], origin?: unknown): number {
  const back = stripped.filter(
    ({ heading }) => !heading._item?.deleted && heading.getAttribute(HEADING_ID_ATTR) === undefined,
  )
  if (back.length === 0) return 0
  const apply = () => {
    for (const { heading, id } of back) heading.setAttribute(HEADING_ID_ATTR, id)
  }
  const doc = back[0]!.heading.doc
  if (doc) doc.transact(apply, origin)
  else apply()
  return back.length
}
