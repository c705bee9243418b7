/**
 * Suggest mode: an edit proposed instead of written. The edit runs on a scratch copy of the document;
 * what it changed is then written into the live document as suggestions (suggestion-marks.ts):
 *
 * - text inserted into an existing block: inserted, with the `suggestionInsert` mark;
 * - text deleted from an existing block: kept, with the `suggestionDelete` mark;
 * - a new block (appended, or written by edit_blocks): inserted whole, all its text proposed; a block
 *   without text (a rule, an image, an empty line) cannot be proposed;
 * - a removed block: kept, all its text proposed for deletion; accepting deletes the text and the block
 *   left empty; a block without text cannot be proposed for removal;
 * - anything else (formatting of kept text, a block's attributes such as a heading level or a task box,
 *   code inside a code block, which holds no marks) is refused, naming what to do instead.
 *
 * Nothing reaches the live document unless the whole edit can be proposed.
 */
import * as Y from 'yjs'
import { editorSchema } from '../lazy-libs.ts'
import { ok, type Result, refuseFor } from '../result.ts'
import { locateSection } from '../sections/section-index.ts'
import { sectionRev, stableJSON } from '../sections/section-rev.ts'
import {
  SUGGESTION_DELETE,
  SUGGESTION_INSERT,
  SUGGESTION_MARKS,
  type SuggestionAttrs,
} from '../suggestion-marks.ts'
import { diffText, type Hunk } from './text-diff.ts'

type Attributes = Record<string, unknown>
type Op = { insert: unknown; attributes?: Attributes }
type Child = Y.XmlElement | Y.XmlText | Y.XmlHook

const WHAT_TO_DO =
  'propose text changes (replace_text, or edit_blocks/append_to_document with blocks that hold text), or ask someone with write access to make this change'

function refusal(message: string): Result<never> {
  return refuseFor('not_proposable', `suggest mode: ${message}; ${WHAT_TO_DO}.`)
}

/** A stable key of a shared type's identity: the same in the live document and its scratch copy. */
function keyOf(type: Child): string {
  const id = type._item?.id
  return id ? `${id.client}:${id.clock}` : 'root'
}

/** The text's characters with their formatting, one entry per UTF-16 unit. */
function charsOf(text: Y.XmlText): { string: string; attributes: Attributes[] } {
  let string = ''
  const attributes: Attributes[] = []
  for (const op of text.toDelta() as Op[]) {
    if (typeof op.insert !== 'string') continue
    string += op.insert
    for (let i = 0; i < op.insert.length; i++) attributes.push(op.attributes ?? {})
  }
  return { string, attributes }
}

/** Formatting without suggestion marks (what a proposed character keeps of the text it was written as). */
function plainFormatting(attributes: Attributes): Attributes {
  const out: Attributes = {}
  for (const [key, value] of Object.entries(attributes))
    if (value != null && !SUGGESTION_MARKS.includes(key.replace(/--.*$/, ''))) out[key] = value
  return out
}

function hostAllowsSuggestions(text: Y.XmlText): boolean {
  const parent = text.parent
  const host = parent instanceof Y.XmlElement ? editorSchema().nodes[parent.nodeName] : undefined
  return host?.allowsMarkType(editorSchema().marks[SUGGESTION_INSERT]!) ?? false
}

/** Every Y.XmlText inside an element, in document order (iterative). */
function textsIn(element: Y.XmlElement | Y.XmlText): Y.XmlText[] {
  const out: Y.XmlText[] = []
  const stack: Child[] = [element]
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    if (node instanceof Y.XmlText) out.push(node)
    else if (node instanceof Y.XmlElement) {
      const children = node.toArray() as Child[]
      for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!)
    }
  }
  return out
}

/** Whether every text of a block holds characters that may carry a suggestion mark, and there is some. */
function proposable(element: Y.XmlElement | Y.XmlText): boolean {
  const texts = textsIn(element)
  if (texts.length === 0) return false
  let chars = 0
  for (const text of texts) {
    if (!hostAllowsSuggestions(text)) return false
    chars += text.length
  }
  // A block inside that holds no text (an image in a list item) would be added or kept unmarked.
  const stack: Child[] = [element]
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    if (!(node instanceof Y.XmlElement)) continue
    const children = node.toArray() as Child[]
    if (children.length === 0 && node.nodeName !== 'hardBreak') return false
    stack.push(...children)
  }
  return chars > 0
}

/** What to do in the live document, checked in full before any of it runs. */
type Step = () => void

function planText(live: Y.XmlText, after: Y.XmlText, mark: SuggestionAttrs, steps: Step[]): Result<true> {
  const before = charsOf(live)
  const next = charsOf(after)
  if (before.string === next.string) {
    for (let i = 0; i < before.attributes.length; i++)
      if (
        stableJSON(plainFormatting(before.attributes[i]!)) !==
        stableJSON(plainFormatting(next.attributes[i]!))
      )
        return refusal('formatting changes of kept text cannot be proposed')
    return { kind: 'ok', value: true }
  }
  if (!hostAllowsSuggestions(live))
    return refusal(`text inside a ${(live.parent as Y.XmlElement).nodeName} cannot hold a suggestion`)
  const hunks = wholeWords(diffText(before.string, next.string), before.string)
  // Kept characters between hunks must keep their formatting too.
  let a = 0
  let b = 0
  for (const hunk of [
    ...hunks,
    { aStart: before.string.length, aEnd: 0, bStart: next.string.length, bEnd: 0 },
  ]) {
    for (; a < hunk.aStart; a++, b++)
      if (
        stableJSON(plainFormatting(before.attributes[a]!)) !==
        stableJSON(plainFormatting(next.attributes[b]!))
      )
        return refusal('formatting changes of kept text cannot be proposed')
    a = hunk.aEnd
    b = hunk.bEnd
  }
  steps.push(() => {
    // Right to left: each change leaves the positions before it valid.
    for (let h = hunks.length - 1; h >= 0; h--) {
      const hunk = hunks[h]!
      let at = hunk.aEnd
      for (let from = hunk.bStart; from < hunk.bEnd; ) {
        const formatting = plainFormatting(next.attributes[from]!)
        let to = from + 1
        while (to < hunk.bEnd && stableJSON(plainFormatting(next.attributes[to]!)) === stableJSON(formatting))
          to++
        // Yjs fills in null for every attribute active here that this object leaves out.
        live.insert(at, next.string.slice(from, to), { ...formatting, [SUGGESTION_INSERT]: { ...mark } })
        at += to - from
        from = to
      }
      if (hunk.aEnd > hunk.aStart)
        live.format(hunk.aStart, hunk.aEnd - hunk.aStart, { [SUGGESTION_DELETE]: { ...mark } })
    }
  })
  return { kind: 'ok', value: true }
}

const WORD = /[\p{L}\p{N}_'’-]/u

/**
 * Hunks grown to whole words, so a person reviews `{--Monday--}{++Tuesday++}` rather than
 * `{--Mon--}{++Tues++}day`: kept characters next to a hunk are equal on both sides, so a hunk takes them in
 * on both; hunks that then touch are merged.
 */
function wholeWords(hunks: readonly Hunk[], a: string): Hunk[] {
  const out: Hunk[] = []
  for (let i = 0; i < hunks.length; i++) {
    let { aStart, aEnd, bStart, bEnd } = hunks[i]!
    const floor = out.at(-1)?.aEnd ?? 0
    const ceiling = hunks[i + 1]?.aStart ?? a.length
    while (aStart > floor && WORD.test(a[aStart - 1]!)) {
      aStart--
      bStart--
    }
    while (aEnd < ceiling && WORD.test(a[aEnd]!)) {
      aEnd++
      bEnd++
    }
    const last = out.at(-1)
    if (last && aStart <= last.aEnd) {
      last.aEnd = aEnd
      last.bEnd = bEnd
    } else out.push({ aStart, aEnd, bStart, bEnd })
  }
  return out
}

function sameAttributes(a: Y.XmlElement, b: Y.XmlElement): boolean {
  return stableJSON(a.getAttributes()) === stableJSON(b.getAttributes())
}

/** What a refusal says of a block or text that cannot be removed or added as a suggestion. */
const NOT_PROPOSABLE = {
  removed: {
    hook: 'this block cannot be changed in suggest mode',
    element: (name: string) =>
      `removing a ${name} that holds no text (or holds code or media) cannot be proposed`,
    text: 'removing this text cannot be proposed',
  },
  added: {
    hook: 'this block cannot be added in suggest mode',
    element: (name: string) => `a new ${name} that holds no text (or holds code or media) cannot be proposed`,
    text: 'this text cannot be proposed here',
  },
}

/**
 * `child`, a child one document holds and the other not, when its removal or addition can be proposed;
 * otherwise the refusal that says why.
 */
function proposableChild(
  child: Child,
  change: keyof typeof NOT_PROPOSABLE,
): Result<Y.XmlElement | Y.XmlText> {
  const says = NOT_PROPOSABLE[change]
  if (child instanceof Y.XmlHook) return refusal(says.hook)
  if (proposable(child)) return ok(child)
  return refusal(child instanceof Y.XmlElement ? says.element(child.nodeName) : says.text)
}

/** Plans the changes under one container that exists in both documents. */
function planContainer(
  live: Y.XmlElement | Y.XmlFragment,
  after: Y.XmlElement | Y.XmlFragment,
  mark: SuggestionAttrs,
  steps: Step[],
): Result<true> {
  const liveChildren = live.toArray() as Child[]
  const afterChildren = after.toArray() as Child[]
  const afterKeys = new Set(afterChildren.map((child) => keyOf(child)))
  const liveByKey = new Map(liveChildren.map((child, index) => [keyOf(child), { child, index }]))
  for (const child of liveChildren) {
    if (afterKeys.has(keyOf(child))) continue
    const removed = proposableChild(child, 'removed')
    if (removed.kind === 'error') return removed
    steps.push(() => {
      for (const text of textsIn(removed.value))
        if (text.length > 0) text.format(0, text.length, { [SUGGESTION_DELETE]: { ...mark } })
    })
  }
  // New children go before the next child both documents hold (after what was removed before it).
  const inserts: Array<{ index: number; children: Child[] }> = []
  let pending: Child[] = []
  for (const child of afterChildren) {
    const kept = liveByKey.get(keyOf(child))
    if (!kept) {
      const added = proposableChild(child, 'added')
      if (added.kind === 'error') return added
      pending.push(child)
      continue
    }
    if (pending.length > 0) inserts.push({ index: kept.index, children: pending })
    pending = []
    const liveChild = kept.child
    if (liveChild instanceof Y.XmlText && child instanceof Y.XmlText) {
      const text = planText(liveChild, child, mark, steps)
      if (text.kind === 'error') return text
    } else if (liveChild instanceof Y.XmlElement && child instanceof Y.XmlElement) {
      if (!sameAttributes(liveChild, child))
        return refusal(
          `changing a ${child.nodeName}'s attributes (its level, box, language or the like) cannot be proposed`,
        )
      const inner = planContainer(liveChild, child, mark, steps)
      if (inner.kind === 'error') return inner
    }
  }
  if (pending.length > 0) inserts.push({ index: liveChildren.length, children: pending })
  if (inserts.length > 0)
    steps.push(() => {
      for (let i = inserts.length - 1; i >= 0; i--) {
        const { index, children } = inserts[i]!
        const copies = children.map((child) => child.clone() as Y.XmlElement | Y.XmlText)
        live.insert(index, copies)
        for (const copy of copies)
          for (const text of textsIn(copy)) {
            if (text.length === 0) continue
            // Earlier suggestion marks of the copied text (moved text) give way to this proposal.
            text.format(0, text.length, { [SUGGESTION_DELETE]: null, [SUGGESTION_INSERT]: { ...mark } })
          }
      }
    })
  return { kind: 'ok', value: true }
}

/** Replaces each `{ sectionId, rev }` the edit answered (revs of the scratch copy) by the live section's rev. */
function liveRevs(value: unknown, fragment: Y.XmlFragment, seen = 0): void {
  if (seen > 2 || value === null || typeof value !== 'object') return
  if (Array.isArray(value)) {
    for (const entry of value) liveRevs(entry, fragment, seen + 1)
    return
  }
  const record = value as Record<string, unknown>
  if (typeof record.sectionId === 'string' && typeof record.rev === 'string') {
    const section = locateSection(fragment, record.sectionId)
    if (section) record.rev = sectionRev(section.heading, section.blocks)
  }
  for (const entry of Object.values(record)) liveRevs(entry, fragment, seen + 1)
}

/**
 * Runs `edit` on a scratch copy of `fragment`'s document and writes what it changed into `fragment` as
 * suggestions by `mark`'s author, or refuses (nothing changed). The edit's answer keeps its shape; revs it
 * names (`{ sectionId, rev }`, and a top-level `rev` with `sectionId` given) are the live sections'.
 */
export function proposeEdit<T>(
  fragment: Y.XmlFragment,
  mark: SuggestionAttrs,
  edit: (fragment: Y.XmlFragment) => Result<T>,
  sectionId?: string,
): Result<T> {
  const doc = fragment.doc
  if (!doc) return refuseFor('detached', 'fragment: it belongs to no Y.Doc.')
  const scratch = new Y.Doc({ gc: false })
  Y.applyUpdate(scratch, Y.encodeStateAsUpdate(doc))
  const scratchFragment = scratch.getXmlFragment(fragmentName(doc, fragment))
  const outcome = edit(scratchFragment)
  if (outcome.kind === 'error') return outcome
  const steps: Step[] = []
  const plan = planContainer(fragment, scratchFragment, mark, steps)
  if (plan.kind === 'error') return plan
  if (steps.length === 0) return refusal('the edit changes nothing that can be proposed')
  doc.transact(() => {
    for (const step of steps) step()
  })
  const value = outcome.value as unknown
  liveRevs(value, fragment)
  if (sectionId && value && typeof value === 'object' && 'rev' in value && !('sectionId' in value)) {
    const section = locateSection(fragment, sectionId)
    if (section) (value as { rev: string }).rev = sectionRev(section.heading, section.blocks)
  }
  return outcome
}

function fragmentName(doc: Y.Doc, fragment: Y.XmlFragment): string {
  for (const [name, type] of doc.share) if ((type as unknown) === fragment) return name
  throw new Error('the fragment is not a shared type of its document')
}
