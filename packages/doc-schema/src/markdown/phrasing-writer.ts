/**
 * Our writer of phrasing content (a paragraph's, heading's, table cell's or link text's children), in place
 * of mdast-util-to-markdown 2.2's `containerPhrasing`, giving the same bytes in one pass (but where the
 * library's read back as other content: attention-markers.ts). The library's
 * spends most of a densely marked paragraph's cost on bookkeeping the output does not show: a position
 * tracker moved over every piece, each attention's content serialised again for that tracker at every
 * level, and a check of the markers built from maps and copied arrays. This writer calls the same handlers
 * for every node that is not attention (text through escape-text.ts, code, breaks, HTML, links), with the
 * same context (the characters around it, the construct stack, the index stack), and chooses the markers
 * of attention in attention-markers.ts.
 *
 * It falls back to the library's own writer for the whole container when the guessed markers do not pair
 * as written (the library then searches other markers), when a container holds a node type ours does not
 * produce, or inline HTML starting with `<` other than the mark and break tags right after a line break.
 */
import type { Html, Parents, PhrasingContent } from 'mdast'
import type { Attention, Handle, Info, State } from 'mdast-util-to-markdown'
import {
  type AttentionItem,
  firstCharacter,
  lastCharacter,
  type PhrasingItem,
  writeAttention,
} from './attention-markers.ts'
import { fastSafe } from './fast-safe.ts'

type Handler = Handle & { peek?: Handle; attention?: Attention }

/** The phrasing node types this writer handles; another sends the container to the library. */
const SUPPORTED = new Set([
  'text',
  'strong',
  'emphasis',
  'delete',
  'inlineCode',
  'break',
  'html',
  'link',
  'image',
])

/** The inline tags our output holds: an HTML tag of kind 7 for the library (never an HTML block start). */
const KIND_SEVEN_TAG = /^<\/?(?:u|mark|sub|sup|br)>$/

/** Why a container needs the library's writer (a string where items are expected). */
type Fallback = string

/**
 * Makes `state` write phrasing with this writer, falling back to its own for a container this writer
 * leaves to it. Called once per serialisation, before anything is written.
 */
export function usePhrasingWriter(state: State, fallbacks?: string[]): void {
  const library = state.containerPhrasing
  state.safe = (value, config) => fastSafe(state, value, config)
  state.containerPhrasing = (parent, info) => {
    const items = phrasing(parent, state, info)
    if (typeof items === 'string') {
      fallbacks?.push(items)
      return library.call(state, parent, info)
    }
    const written = writeAttention(items, info.before, info.after)
    if (written !== undefined) return written
    fallbacks?.push('attention markers that do not pair as first guessed')
    return library.call(state, parent, info)
  }
}

/** What the library hands a child: its position (unused by our output) and the characters around it, nothing else. */
function around(info: Info, before: string, after: string): Info {
  return { now: info.now, lineShift: info.lineShift, before, after }
}

function handlerOf(state: State, type: string): Handler {
  return (state.handlers as unknown as Record<string, Handler>)[type]!
}

/**
 * The children of `parent` written (text, code, links…) or as attention items, with the characters before
 * and after each as the library gives them: after is the first character the next sibling's handler (or
 * its `peek`) writes with no context, before the last character written.
 */
function phrasing(parent: Parents, state: State, info: Info): PhrasingItem[] | Fallback {
  const children = parent.children as PhrasingContent[]
  const results: PhrasingItem[] = []
  let before = info.before
  const indexStack = state.indexStack
  indexStack.push(-1)
  const top = indexStack.length - 1
  for (let index = 0; index < children.length; index++) {
    const child = children[index]!
    if (!SUPPORTED.has(child.type)) {
      indexStack.pop()
      return `a ${child.type} node`
    }
    indexStack[top] = index
    let after = info.after
    const next = children[index + 1]
    if (next !== undefined) {
      if (!SUPPORTED.has(next.type)) {
        indexStack.pop()
        return `a ${next.type} node`
      }
      const handler = handlerOf(state, next.type)
      after = firstCharacter((handler.peek ?? handler)(next, parent, state, around(info, '', '')))
    }
    // HTML right after a line break could be read as an HTML block: the library turns that break into a
    // space unless the HTML is of kind 7 (our mark and break tags).
    const previous = results[results.length - 1]
    if (typeof previous === 'string' && (before === '\r' || before === '\n') && child.type === 'html') {
      const value = (child as Html).value
      if (value.startsWith('<') && !KIND_SEVEN_TAG.test(value)) {
        indexStack.pop()
        return 'inline HTML other than a mark or break tag after a line break'
      }
      if (!value.startsWith('<')) {
        results[results.length - 1] = previous.replace(/(\r?\n|\r)$/, ' ')
        before = ' '
      }
    }
    const handler = handlerOf(state, child.type)
    if (handler.attention) {
      const item = attentionItem(child as Parents, handler.attention, state, info)
      if (typeof item === 'string') {
        indexStack.pop()
        return item
      }
      if (!item) continue
      results.push(item)
      before = lastCharacter(item.sequences[0]!)
    } else {
      const value = handler(child, parent, state, around(info, before, after))
      if (!value) continue
      results.push(value)
      before = lastCharacter(value)
    }
  }
  indexStack.pop()
  return results
}

/** Emphasis, strong or strikethrough as an item: its children written inside its preferred sequence. */
function attentionItem(
  node: Parents,
  attention: Attention,
  state: State,
  info: Info,
): AttentionItem | undefined | Fallback {
  const { construct, markers, sizes } = attention(node, state)
  const sequences = markers.flatMap((marker) => sizes.map((size) => marker.repeat(size)))
  const sequence = sequences[0]!
  const exit = state.enter(construct)
  const children = phrasing(node, state, around(info, sequence, sequence))
  exit()
  if (typeof children === 'string') return children
  // Empty attention cannot form.
  if (children.length === 0) return undefined
  return { children, sequences }
}
