import * as Y from 'yjs'
import { ok, type Result, refuse } from '../result.ts'
import { yTextString } from '../yjs/plain-text.ts'
import { editTarget, revAfterEdit } from './edit-target.ts'

type Occurrence = { text: Y.XmlText; index: number; inCode: boolean }

/**
 * Replaces the one occurrence of `oldText` in a section (heading included) by a delete and insert inside its
 * Y.XmlText: formatting around it and the rest of the block survive, and so does concurrent typing.
 * The new text takes the formatting of the first replaced character.
 */
export function replaceText(
  fragment: Y.XmlFragment,
  sectionId: string,
  rev: string,
  oldText: string,
  newText: string,
): Result<{ rev: string }> {
  if (oldText === '')
    return refuse('empty_old_text', 'oldText: it is empty; give the exact text to replace.', 'oldText')
  if (oldText === newText) {
    return refuse(
      'nothing_to_change',
      'newText: it equals oldText; this edit would change nothing.',
      'newText',
    )
  }
  const target = editTarget(fragment, sectionId, rev)
  if (target.kind === 'error') return target
  const { doc, section } = target.value

  const found: Occurrence[] = []
  for (const element of [section.heading, ...section.blocks]) collect(element, oldText, found, false)
  if (found.length !== 1) {
    const code = found.length === 0 ? 'text_not_found' : 'text_ambiguous'
    const what = found.length === 0 ? 'does not occur' : `occurs ${found.length} times`
    return refuse(
      code,
      `oldText: it ${what} in the section (count ${found.length}); give text that occurs exactly once, with more context.`,
      'oldText',
    )
  }
  const { text, index, inCode } = found[0]!
  if (newText.includes('\n') && !inCode) {
    return refuse(
      'newline_in_text',
      'newText: a line break cannot go inside a text block; use editBlocks instead.',
      'newText',
    )
  }

  const format = formatAt(text, index)
  doc.transact(() => {
    text.delete(index, oldText.length)
    if (newText !== '') text.insert(index, newText, format)
  })
  return ok({ rev: revAfterEdit(fragment, sectionId) })
}

/** Every occurrence of `needle` under `root`, in document order. Iterative: depth is the document's choice. */
function collect(root: Y.XmlElement, needle: string, found: Occurrence[], inCode: boolean) {
  const stack: Array<[Y.XmlElement | Y.XmlText, boolean]> = [[root, inCode]]
  for (let entry = stack.pop(); entry !== undefined; entry = stack.pop()) {
    const [node, code] = entry
    if (node instanceof Y.XmlText) {
      const haystack = yTextString(node)
      // Overlapping matches count: "aa" in "aaa" is ambiguous.
      for (let at = haystack.indexOf(needle); at >= 0; at = haystack.indexOf(needle, at + 1)) {
        found.push({ text: node, index: at, inCode: code })
      }
      continue
    }
    const childCode = code || node.nodeName === 'codeBlock'
    const children = node.toArray()
    for (let i = children.length - 1; i >= 0; i--) {
      const child = children[i]
      if (child instanceof Y.XmlElement || child instanceof Y.XmlText) stack.push([child, childCode])
    }
  }
}

/**
 * Formatting for text inserted at `index`: that of the character there, with every attribute of the
 * preceding character that it lacks set to null (Yjs would otherwise extend the preceding marks).
 */
function formatAt(text: Y.XmlText, index: number): Record<string, unknown> {
  let offset = 0
  let before: Record<string, unknown> = {}
  let at: Record<string, unknown> = {}
  for (const op of text.toDelta() as { insert: unknown; attributes?: Record<string, unknown> }[]) {
    if (typeof op.insert !== 'string') continue
    const end = offset + op.insert.length
    if (offset < index && index <= end) before = op.attributes ?? {}
    if (offset <= index && index < end) {
      at = op.attributes ?? {}
      break
    }
    offset = end
  }
  const format: Record<string, unknown> = {}
  for (const key of Object.keys(before)) format[key] = null
  return { ...format, ...at }
}
