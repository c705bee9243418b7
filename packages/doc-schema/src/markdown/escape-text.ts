/**
 * How text is escaped on the way out: only where a character would otherwise change what this package's
 * parsers (markdown-it, html on) read back. Built on mdast-util-to-markdown's own machinery: its `safe()`
 * with its `unsafe` patterns, of which three broad ones are narrowed for text (`textHandler` below):
 *
 * - `[` is escaped where it could open something: at a line start when a definition (`[a]: …`), a task
 *   checkbox (`[ ]`, `[x]`) or an unclosed label could form. Elsewhere a bracket cannot make a link, since
 *   `](` (the library escapes that `(`) and definitions never occur in our output. Footnotes (`[^1]`, and
 *   `[^1]: …` at a line start) are written as they are: both parsers keep them as that text (footnotes.ts)
 *   and a GFM renderer shows them as footnotes. The library (and its GFM footnote extension) escapes every `[`.
 * - `&` is escaped only before what reads as a character reference (`&name;`, `&#9;`, `&#x9;`), in text and
 *   in link and image targets (`withNarrowAmpersand`).
 * - An inline HTML tag (a complete `<i>`, `</a>`, `<a href="#x" name="x">`, `<!-- … -->`, exactly what
 *   markdown-it's HTML_TAG_RE reads as one) is written as is: both parsers keep inline HTML as its text, so
 *   it reads back the same, and a file's `<b>`/`<a name>` leave as they came in. It is escaped (`\<`) where
 *   the parsers would read more into it: the mark tags `<u> <ins> <mark> <sub> <sup>` and `<br>`, a tag that
 *   would start an HTML block at a line start, a tag holding a line break, and a tag holding `|` in a table
 *   cell. Every other `<` keeps the library's rule (escaped before a letter, `!`, `/` or `?`).
 */

import blockNames from 'markdown-it/lib/common/html_blocks.mjs'
import { HTML_OPEN_CLOSE_TAG_RE, HTML_TAG_RE } from 'markdown-it/lib/common/html_re.mjs'
import type { Text } from 'mdast'
import type { Handle, State, Unsafe } from 'mdast-util-to-markdown'

/** Tags the parsers read as marks or breaks (inline-tokens.ts): as text they must stay escaped. */
const MARK_OR_BREAK_TAG = /^<\/?(?:u|ins|mark|sub|sup|br)\s*\/?>$/i
/** What starts an HTML block at a line start (markdown-it's html_block sequences 1–6). */
const HTML_BLOCK_START = new RegExp(
  `^<(?:[!?]|/?(?:script|pre|style|textarea|${blockNames.join('|')})(?:\\s|/?>|$))`,
  'i',
)
/** Sequence 7: a line that is one open or close tag, then only whitespace. */
const HTML_BLOCK_TAG_LINE = new RegExp(`${HTML_OPEN_CLOSE_TAG_RE.source}\\s*$`)

/** What follows `&` in a character reference (`&amp;`, `&#35;`, `&#x23;`): only then is `&` escaped. */
const CHARACTER_REFERENCE = '(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{0,31});'

/** The narrow patterns that replace the library's `[` and `&` rules in text (see above). */
const TEXT_UNSAFE: Unsafe[] = [
  {
    atBreak: true,
    character: '[',
    after: '(?!\\^[^\\]\\s]+\\]:)[^\\]]*(?:\\]:|$)|[ xX]\\](?:[ \\t\\r\\n]|$)',
  },
  {
    character: '&',
    after: CHARACTER_REFERENCE,
    inConstruct: 'phrasing',
  },
]

/** In link and image destinations and titles: `&` only before a character reference (decoded there). */
const DESTINATION_AMP: Unsafe = {
  character: '&',
  after: CHARACTER_REFERENCE,
  inConstruct: ['destinationLiteral', 'destinationRaw', 'titleApostrophe', 'titleQuote'],
}

/** A library pattern this module narrows for text: every `&`, and `[` other than in labels and references. */
function isNarrowed(pattern: Unsafe): boolean {
  if (pattern.character === '&') return true
  if (pattern.character !== '[') return false
  const inside = pattern.inConstruct === undefined ? [] : [pattern.inConstruct].flat()
  return pattern.atBreak === true || inside.includes('phrasing')
}

const textUnsafe = new WeakMap<Unsafe[], Unsafe[]>()
const destinationUnsafe = new WeakMap<Unsafe[], Unsafe[]>()

/**
 * A link or image handler of the library with `&` in its destination and title escaped only before a
 * character reference (`?a=1&b=2` stays as written); its text goes through `textHandler` as usual.
 */
export function withNarrowAmpersand(handler: Handle): Handle {
  return (node, parent, state, info) => {
    const saved = state.unsafe
    let list = destinationUnsafe.get(saved)
    if (!list) {
      list = [...saved.filter((pattern) => pattern.character !== '&'), DESTINATION_AMP]
      destinationUnsafe.set(saved, list)
    }
    state.unsafe = list
    try {
      return handler(node, parent, state, info)
    } finally {
      state.unsafe = saved
    }
  }
}

/** The state's patterns with the broad `[`/`&` rules replaced by TEXT_UNSAFE (cached per state's list). */
function unsafeForText(state: State): Unsafe[] {
  let list = textUnsafe.get(state.unsafe)
  if (!list) {
    list = [...state.unsafe.filter((pattern) => !isNarrowed(pattern)), ...TEXT_UNSAFE]
    textUnsafe.set(state.unsafe, list)
  }
  return list
}

/** Whether the tag at `start` of `value` may be written unescaped (see the module comment). */
function rawTagAllowed(state: State, value: string, start: number, tag: string, before: string): boolean {
  if (MARK_OR_BREAK_TAG.test(tag) || /[\r\n]/.test(tag)) return false
  if (tag.includes('|') && state.stack.includes('tableCell')) return false
  const lineStart = /(?:^|[\r\n])[ \t]*$/.test(before + value.slice(0, start))
  if (!lineStart) return true
  const rest = value.slice(start).split(/[\r\n]/)[0]!
  return !HTML_BLOCK_START.test(rest) && !HTML_BLOCK_TAG_LINE.test(rest)
}

/**
 * mdast-util-to-markdown's text handler with the narrowed patterns, writing inline HTML tags as they are.
 * Plain stretches go through the library's `state.safe` with the neighbouring characters as context.
 */
export const textHandler: Handle = (node, parent, state, info) => {
  const value = (node as Text).value
  const siblings = parent ? parent.children : []
  const index = state.indexStack[state.indexStack.length - 1] ?? -1
  const around = { ...info, afterNode: siblings[index + 1], beforeNode: siblings[index - 1] }
  const saved = state.unsafe
  state.unsafe = unsafeForText(state)
  try {
    let out = ''
    let from = 0
    for (let at = value.indexOf('<'); at !== -1; at = value.indexOf('<', at + 1)) {
      const tag = HTML_TAG_RE.exec(value.slice(at))?.[0]
      if (!tag || !rawTagAllowed(state, value, at, tag, info.before)) continue
      // The stretch before the tag, escaped as if the tag's `<` followed it (a `\` before it is doubled).
      out += state.safe(value.slice(from, at), {
        ...around,
        before: from === 0 ? info.before : value.charAt(from - 1),
        after: '<',
        afterNode: undefined,
        beforeNode: from === 0 ? around.beforeNode : undefined,
      })
      out += tag
      from = at + tag.length
      at = from - 1
    }
    if (from === 0) return state.safe(value, around)
    return (
      out +
      state.safe(value.slice(from), {
        ...around,
        before: value.charAt(from - 1),
        beforeNode: undefined,
      })
    )
  } finally {
    state.unsafe = saved
  }
}
