/**
 * What the editor-update check (check-update.ts) asks of each inserted item: where it sits (the fragment,
 * an element at its depth, a text run in its block) and whether its content fits there in the schema:
 * node types allowed in their parent, nesting, text in text blocks only, marks and attributes the node's or
 * mark's own with bounded values, and suggestion marks only as the server started them.
 */
import type { MarkType, NodeType } from '@tiptap/pm/model'
import * as Y from 'yjs'
import { colorAttributeProblem } from '../color.ts'
import { editorSchema } from '../lazy-libs.ts'
import { MAX_ATTRIBUTE_CHARS, MAX_NESTING_DEPTH } from '../limits.ts'
import { stableJSON } from '../sections/section-rev.ts'
import { SUGGESTION_MARKS } from '../suggestion-marks.ts'
import { MARK_KEY } from './check-deletions.ts'
import { CONTENT, type RowContent, TYPE_REF } from './update-rows.ts'

/** The content of an item that creates a shared type. */
export type TypeContent = Extract<RowContent, { kind: typeof CONTENT.type }>

/** Where an item sits: the fragment, an element (with its depth), a text run (in its block), or nowhere. */
export type Place =
  | { kind: 'fragment'; sub: string | null }
  | { kind: 'element'; name: string; depth: number; sub: string | null }
  | { kind: 'text'; host: string; sub: string | null }
  /** Inside deleted or collected content: Yjs integrates it as deleted, so it cannot harm. */
  | { kind: 'gone' }
  /** `missing`: it builds on content the document does not have. */
  | { kind: 'refused'; reason: string; missing?: true }

type YItem = Y.Item

/** Most array entries in an attribute value (table column widths). */
const MAX_ATTRIBUTE_ARRAY = 1_000

const childTypes = new Map<NodeType, Set<string>>()

/** Node types the content expression of `type` can hold anywhere (its content match automaton's edges). */
function allowedChildren(type: NodeType): Set<string> {
  let names = childTypes.get(type)
  if (names) return names
  names = new Set()
  const seen = new Set([type.contentMatch])
  const queue = [type.contentMatch]
  while (queue.length > 0) {
    const match = queue.pop()!
    for (let i = 0; i < match.edgeCount; i++) {
      const edge = match.edge(i)
      names.add(edge.type.name)
      if (!seen.has(edge.next)) {
        seen.add(edge.next)
        queue.push(edge.next)
      }
    }
  }
  childTypes.set(type, names)
  return names
}

function attributeValueProblem(value: unknown): string | undefined {
  if (value === null || typeof value === 'boolean') return undefined
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : 'is not a finite number'
  if (typeof value === 'string')
    return value.length <= MAX_ATTRIBUTE_CHARS
      ? undefined
      : `is longer than ${MAX_ATTRIBUTE_CHARS} characters`
  if (Array.isArray(value)) {
    if (value.length > MAX_ATTRIBUTE_ARRAY) return `has more than ${MAX_ATTRIBUTE_ARRAY} entries`
    for (const entry of value)
      if (entry !== null && !(typeof entry === 'number' && Number.isFinite(entry)))
        return 'is a list of something other than numbers'
    return undefined
  }
  return 'is not a string, number, boolean or list of numbers'
}

function markProblem(key: string, value: unknown, host: NodeType): string | undefined {
  const name = MARK_KEY.exec(key)?.[1]
  const markType: MarkType | undefined = name ? editorSchema().marks[name] : undefined
  if (!markType) return `mark "${key.slice(0, 40)}" is not part of this server's schema`
  if (!host.allowsMarkType(markType)) return `mark "${markType.name}" is not allowed in ${host.name}`
  if (value === null) return undefined // ends the mark
  if (typeof value !== 'object' || Array.isArray(value))
    return `mark "${markType.name}" has attributes that are not an object`
  for (const [attr, attrValue] of Object.entries(value as Record<string, unknown>)) {
    if (!(attr in (markType.spec.attrs ?? {})))
      return `mark "${markType.name}" has no attribute "${attr.slice(0, 40)}"`
    // A colour reaches every reader's page as a style: `#rrggbb` only (color.ts).
    const problem = attr === 'color' ? colorAttributeProblem(attrValue) : attributeValueProblem(attrValue)
    if (problem) return `mark "${markType.name}" attribute "${attr}" ${problem}`
  }
  return undefined
}

/** How many items the suggestion check walks left to find the suggestion an editor restores. */
export const MAX_SUGGESTION_WALK = 10_000

/**
 * A suggestion is started by the server only (its author comes from the principal): an editor may end one
 * (null) but may set a suggestion mark only to a value the same text already holds to its left, which is
 * how Yjs closes the mark again after text typed inside it (`insertText`'s negated attributes).
 */
function suggestionProblem(
  content: { key: string; value: unknown },
  findLeft: () => YItem | undefined,
): string | undefined {
  const name = MARK_KEY.exec(content.key)?.[1]
  if (!name || !SUGGESTION_MARKS.includes(name) || content.value === null) return undefined
  const wanted = stableJSON(content.value)
  let left = findLeft()
  for (let steps = 0; left && steps < MAX_SUGGESTION_WALK; steps++, left = left.left ?? undefined) {
    const held = left.content
    if (held instanceof Y.ContentFormat && held.key === content.key && stableJSON(held.value) === wanted)
      return undefined
  }
  return `mark "${name}" is a suggestion, which only the server starts (an agent in suggest mode); an editor may accept or reject one, not propose one`
}

/** The place of an integrated type of the live document (its depth walked up, at most the ceiling + 1). */
export function describeType(
  type: Y.AbstractType<unknown>,
  fragment: Y.AbstractType<unknown> | undefined,
  sub: string | null,
): Place {
  if (type._item?.deleted) return { kind: 'gone' }
  if (type === fragment) return { kind: 'fragment', sub }
  if (type instanceof Y.XmlElement) {
    let depth = 1
    let parent = type.parent
    while (parent && parent !== fragment && depth <= MAX_NESTING_DEPTH) {
      depth++
      parent = parent.parent
    }
    return { kind: 'element', name: type.nodeName, depth, sub }
  }
  if (type instanceof Y.XmlText) {
    const host = type.parent
    if (host instanceof Y.XmlElement) return { kind: 'text', host: host.nodeName, sub }
    return { kind: 'refused', reason: 'the update writes into text that is not inside a block' }
  }
  return { kind: 'refused', reason: 'the update writes into a shared type that is not the document' }
}

/** The place of the children of a type created by an item of this update (`created`, its content). */
export function inside(created: TypeContent, at: Place, sub: string | null): Place {
  if (at.kind === 'gone' || at.kind === 'refused') return at
  if (created.ref === TYPE_REF.xmlElement) {
    const depth = at.kind === 'fragment' ? 1 : at.kind === 'element' ? at.depth + 1 : MAX_NESTING_DEPTH + 1
    return { kind: 'element', name: created.name ?? '', depth, sub }
  }
  if (created.ref === TYPE_REF.xmlText && at.kind === 'element') return { kind: 'text', host: at.name, sub }
  return { kind: 'refused', reason: 'the update writes into a shared type that is not part of a document' }
}

/**
 * Whether an inserted item's content fits its place: `content` is its decoded content, or `'text'` for a
 * string (whose characters the check never needs); `findLeft` gives the live item left of where it lands
 * (asked only for a suggestion mark).
 */
export function contentProblem(
  content: RowContent | 'text',
  place: Exclude<Place, { kind: 'gone' | 'refused' }>,
  findLeft: () => YItem | undefined,
): string | undefined {
  if (place.sub !== null) {
    // An attribute (a map entry of the element).
    if (place.kind !== 'element') return 'the update sets an attribute on something that is not a block'
    const nodeType = editorSchema().nodes[place.name]
    const attrs = nodeType?.spec.attrs ?? {}
    if (!(place.sub in attrs))
      return `attribute "${place.sub.slice(0, 40)}" is not part of ${place.name} in this server's schema`
    if (content === 'text' || content.kind !== CONTENT.any)
      return `attribute "${place.sub}" of ${place.name} is not a plain value`
    for (const value of content.values) {
      const problem = attributeValueProblem(value)
      if (problem) return `attribute "${place.sub}" of ${place.name} ${problem}`
    }
    return undefined
  }
  if (content !== 'text' && content.kind === CONTENT.type) {
    if (content.ref === TYPE_REF.xmlElement) {
      const name = content.name ?? ''
      const schema = editorSchema()
      const nodeType = schema.nodes[name]
      if (!nodeType || nodeType.isText || nodeType === schema.topNodeType)
        return `node type "${name.slice(0, 40)}" is not part of this server's schema`
      const parentType =
        place.kind === 'fragment'
          ? schema.topNodeType
          : place.kind === 'element'
            ? schema.nodes[place.name]
            : undefined
      if (!parentType || !allowedChildren(parentType).has(nodeType.name))
        return `${nodeType.name} is not allowed inside ${place.kind === 'text' ? 'text' : (parentType?.name ?? 'this place')}`
      const depth = place.kind === 'element' ? place.depth + 1 : 1
      if (depth > MAX_NESTING_DEPTH) return `blocks are nested deeper than ${MAX_NESTING_DEPTH} levels`
      return undefined
    }
    if (content.ref === TYPE_REF.xmlText) {
      const host = place.kind === 'element' ? editorSchema().nodes[place.name] : undefined
      if (!host?.inlineContent)
        return `text is not allowed directly inside ${place.kind === 'element' ? place.name : 'the document'}`
      return undefined
    }
    return 'the update creates a shared type that is not part of a document (only elements and text)'
  }
  if (place.kind !== 'text') return 'the update writes text or values outside a text block'
  const host = editorSchema().nodes[place.host]
  if (!host) return `node type "${place.host.slice(0, 40)}" is not part of this server's schema`
  if (content === 'text') return undefined
  if (content.kind === CONTENT.format)
    return markProblem(content.key, content.value, host) ?? suggestionProblem(content, findLeft)
  return 'the update embeds something other than text and marks in a text block'
}
