/**
 * How text is escaped on the way out: only where a character would otherwise change what this package's
 * parsers (markdown-it, html on; CommonMark plus GFM tables and `~~` strikethrough) read back. Built on
 * mdast-util-to-markdown's own machinery, its `safe()` with its `unsafe` patterns, of which the broad ones
 * are narrowed for text (`textHandler` below):
 *
 * - `[` is escaped where it could open something: at the start of a paragraph when a definition
 *   (`[a]: …`, the label may run on through other marks) or, in a list item, a task checkbox (`[ ]`, `[x]`)
 *   would form. After a hard break neither can (a definition cannot interrupt a paragraph), nor elsewhere
 *   in a line, since `](` (the library escapes that `(`) and definitions never occur in our output.
 *   Footnotes (`[^1]`, and `[^1]: …` at a paragraph's start) are written as they are: both parsers keep
 *   them as that text (footnotes.ts) and a GFM renderer shows them as footnotes; `[^1]:` after a hard break
 *   is escaped (inside a definition it would start another).
 * - In a link's text or an image's alt, `[` and `]` are escaped only when they are unbalanced there
 *   (`[f([options])](#f)` stays as written); a link's text longer than LABEL_LOOKAHEAD_CHARS keeps the
 *   library's rule (a bounded read can cut it short, and its start must be written as the whole is). A link
 *   target's `(` and `)` likewise only when unbalanced (`…/Shebang_(Unix)`).
 * - `&` is escaped only before what reads as a character reference (`&name;`, `&#9;`, `&#x9;`), in text and
 *   in link and image targets (`withNarrowAmpersand`, escape-links.ts).
 * - `~` only in a run of two or more (markdown-it's strikethrough is `~~`; `@~6.16.0` stays), and `@` and
 *   `www.` never: GFM's e-mail and www autolink literals are not read by either parser (import's linkify
 *   takes only `https://…` and `mailto:` links, whose `:` stays escaped in text).
 * - An inline HTML tag (a complete `<i>`, `</a>`, `<a href="#x" name="x">`, `<!-- … -->`, exactly what
 *   markdown-it's HTML_TAG_RE reads as one) is written as is when its author meant HTML (html-in-text.ts:
 *   attributes, or a lower-case inline element: `<b>`, `<kbd>`): both parsers keep inline HTML as its
 *   text, so it reads back the same. Another bare tag (`<string>`, `<T>`) is escaped (`\<string>`), as its
 *   source most likely had it. Still escaped where the parsers would read more into a tag: the mark tags
 *   `<u> <ins> <mark> <sub> <sup>` and `<br>`, a tag that would start an HTML block at a line start, a tag
 *   holding a line break, and a tag holding `|` in a table cell. Any other `<` is escaped only before a
 *   complete tag, an autolink or a tag's start the text ends in (TAG_AFTER): `a < b`, `Map<K, V>` stay.
 *
 * - In text shown with its pending suggestions (reads, `suggestions: 'show'`), the braces of a suggestion
 *   marker are escaped: `{` before `+` or `-` and `}` after one (`\{++`, `++\}`), so only a real
 *   suggestion mark (written by inline-to-mdast.ts as raw markers) shows as `{++…++}` or `{--…--}`. Text
 *   cannot pose as a proposal, and both parsers read the escapes back as the braces (CommonMark escapes any
 *   ASCII punctuation), so what an agent copies from a read and writes back is the text it read. Code spans
 *   and blocks show their text verbatim (backslashes are literal there); a real marker is never inside one.
 *
 * Most text needs none of this: a stretch holding no character any pattern could act on there is written
 * as it is without running the patterns (`mayNeedEscape`), which is most of a document's text.
 */

import blockNames from 'markdown-it/lib/common/html_blocks.mjs'
import { HTML_OPEN_CLOSE_TAG_RE, HTML_TAG_RE } from 'markdown-it/lib/common/html_re.mjs'
import type { Parents, PhrasingContent, Text } from 'mdast'
import type { Handle, Info, SafeConfig, State, Unsafe } from 'mdast-util-to-markdown'
import { CHARACTER_REFERENCE, derived, LABEL_LOOKAHEAD_CHARS } from './escape-links.ts'
import { FOOTNOTE_DEFINITION } from './footnotes.ts'
import { tagMeantAsHtml } from './html-in-text.ts'

/** Tags the parsers read as marks or breaks (inline-tokens.ts): as text they must stay escaped. */
const MARK_OR_BREAK_TAG = /^<\/?(?:u|ins|mark|sub|sup|br)\s*\/?>$/i
/** What starts an HTML block at a line start (markdown-it's html_block sequences 1–6). */
const HTML_BLOCK_START = new RegExp(
  `^<(?:[!?]|/?(?:script|pre|style|textarea|${blockNames.join('|')})(?:\\s|/?>|$))`,
  'i',
)
/** Sequence 7: a line that is one open or close tag, then only whitespace. */
const HTML_BLOCK_TAG_LINE = new RegExp(`${HTML_OPEN_CLOSE_TAG_RE.source}\\s*$`)

/** The library's constructs inside phrasing where inline markup cannot form (its `fullPhrasingSpans`). */
const NO_PHRASING_SPANS: Unsafe['notInConstruct'] = [
  'autolink',
  'destinationLiteral',
  'destinationRaw',
  'reference',
  'titleQuote',
  'titleApostrophe',
]

/**
 * What after `<` makes it markup in a line: a complete tag or comment (markdown-it's HTML_TAG_RE), an
 * autolink (`<https://…>`, `<a@b.co>`: a scheme or an `@`, no space inside), or the start of a tag the text
 * ends in (it may be completed by what follows). `a < b`, `x<3`, `<=>` and `Map<K, V>` stay as written.
 * A declaration's start (`<!` and a letter) always: any `>` later in the paragraph ends it (markdown-it's
 * `<![A-Za-z][^>]*>`), also the closing tag of an HTML mark the text is in (`<sup><!a</sup>` read as
 * `<sup>` and a declaration; found by the generated round trip).
 */
const TAG_AFTER = `(?:(?<=(?=${HTML_TAG_RE.source.slice(1)})<)|(?:[A-Za-z][A-Za-z0-9+.-]{1,31}:|[^<>\\s@]+@)[^<>\\s]*>|[!/?A-Za-z][^<>]*$|![A-Za-z])`

/** The narrow patterns that replace the library's `&`, `~` and `<` rules in text (see above). */
const TEXT_UNSAFE: Unsafe[] = [
  { character: '&', after: CHARACTER_REFERENCE, inConstruct: 'phrasing' },
  { character: '<', after: TAG_AFTER, inConstruct: 'phrasing', notInConstruct: NO_PHRASING_SPANS },
  // A bare URL in a link's text: markdown-it's linkify runs while it looks for the text's end, and a URL
  // ending in `\` takes the backslash of an escaped `]` (GFM's own `:` rule skips link text).
  { character: ':', before: '[ps]', after: '\\/', inConstruct: 'label' },
  // Lookarounds, not the characters themselves: the library's expressions consume what they match, so in
  // `~~~a` (a struck `~a`) `(~)~` and `~(?:~)` both pass over the third `~`, which then opened a code fence.
  { character: '~', after: '(?=~)', inConstruct: 'phrasing' },
  { character: '~', before: '(?<=~)', inConstruct: 'phrasing' },
]
/**
 * A suggestion marker's braces, in text shown with suggestions (see above): only a brace that forms one
 * (`{++`, `{--`, `++}`, `--}`), so `{-1}` or `a+}` stay as they are.
 */
const MARKER_UNSAFE: Unsafe[] = [
  { character: '{', after: '\\+\\+|--' },
  { character: '}', before: '\\+\\+|--' },
]
const withMarkersUnsafe = new WeakMap<Unsafe[], Unsafe[]>()
const withMarkers = (list: Unsafe[]) => derived(withMarkersUnsafe, list, () => [...list, ...MARKER_UNSAFE])
const markersIf = (markers: boolean, list: Unsafe[]) => (markers ? withMarkers(list) : list)

/**
 * The library's line-start `[` rule, kept for text holding its own line breaks (rare: imports turn them
 * into spaces), where this module does not follow the lines: every `[` starting one is escaped.
 */
const LINE_START_BRACKET: Unsafe = { atBreak: true, character: '[' }

/**
 * A library pattern this module narrows or drops for text: every `&` and `~`, `<` within a line, `[` other
 * than in labels and references, and GFM's e-mail (`@`) and www (`.` after `w`) autolink literals.
 */
function isNarrowed(pattern: Unsafe): boolean {
  const { character } = pattern
  if (character === '&' || character === '~' || character === '@') return true
  if (character === '.') return pattern.before === '[Ww]'
  if (character === '<') return pattern.atBreak !== true && pattern.inConstruct === 'phrasing'
  if (character !== '[') return false
  const inside = pattern.inConstruct === undefined ? [] : [pattern.inConstruct].flat()
  return pattern.atBreak === true || inside.includes('phrasing')
}

const textUnsafe = new WeakMap<Unsafe[], Unsafe[]>()
const textUnsafeWithBreaks = new WeakMap<Unsafe[], Unsafe[]>()
const noLinkOpenerUnsafe = new WeakMap<Unsafe[], Unsafe[]>()

/** The library's `(` after `]` (a link's destination): needed only where a `[` before could open the link. */
const isLinkParenthesis = (pattern: Unsafe) => pattern.character === '(' && pattern.before === '\\]'

/**
 * The state's patterns with the broad rules replaced by TEXT_UNSAFE (cached per state's list); with line
 * breaks in the text, the line-start `[` rule too; in a block without a link opener, no `(` after `]`.
 */
function unsafeForText(state: State, lineBreaks: boolean, noLinkOpener: boolean): Unsafe[] {
  const from = state.unsafe
  if (lineBreaks)
    return derived(textUnsafeWithBreaks, from, () => [
      ...unsafeForText(state, false, false),
      LINE_START_BRACKET,
    ])
  if (noLinkOpener) {
    const base = unsafeForText(state, false, false)
    return derived(noLinkOpenerUnsafe, base, () => base.filter((pattern) => !isLinkParenthesis(pattern)))
  }
  return derived(textUnsafe, from, () => [...from.filter((pattern) => !isNarrowed(pattern)), ...TEXT_UNSAFE])
}

/** Characters some pattern may act on anywhere in text; without them (and the edge cases) nothing is. */
const ANYWHERE = /[\\`*_[\]<>&~|\r\n\t]|[ps]:\/|[!:# ]$/
/** What may start a block, a list item, a table row or an HTML block at a line start. */
const AT_LINE_START = /^(?:[ \t#*+\-=>[_`~|:<]|\d+[.)])/
const LINE_START = /(?:^|[\r\n])[ \t]*$/

/**
 * False when `safe()` would certainly return `value` unchanged: none of its characters can be escaped in
 * text given the characters around it. Every pattern in text is on a character of ANYWHERE, at a line start
 * (AT_LINE_START), at the end of the text (`!` before `[`, `:` before `/`, `#` closing a heading, a space
 * before a line break), or `(` after `]`. Autolinks percent-encode other characters: never skipped there.
 */
function mayNeedEscape(state: State, value: string, before: string, markers = false): boolean {
  if (markers && (value.includes('{') || value.includes('}'))) return true
  if (ANYWHERE.test(value) || state.stack.includes('autolink')) return true
  if (value.charCodeAt(0) === 40 && before.endsWith(']')) return true
  return AT_LINE_START.test(value) && LINE_START.test(before)
}

/** A definition (`[label]:`, footnotes excepted) or a task checkbox (`[ ]`, `[x]`) at the text's start. */
const DEFINITION_START = /^\[(?!\^[^\]\s]+\]:)[^\]]*\]:/
/**
 * What cannot be a definition though it starts like one: after the destination, on its line, comes text
 * that is no title (`[Fix]: \`a\` b`): markdown-it reads the whole as a paragraph.
 */
const NOT_A_DEFINITION = /^\[[^\]]*\]:[ \t]*(?:<[^>\n]*>|[^\s<]\S*)[ \t]+[^\s"'(]/
const CHECKBOX_START = /^\[[ xX]\](?:[ \t\r\n]|$)/

/**
 * The characters of the siblings after `index` (their text, code, alt and raw HTML; breaks as `\n`), at
 * least `chars` of them when there are.
 */
function textAfter(siblings: readonly PhrasingContent[], index: number, chars: number): string {
  let out = ''
  for (let at = index + 1; at < siblings.length && out.length < chars; at++) out += plainText(siblings[at]!)
  return out
}
function plainText(node: PhrasingContent): string {
  switch (node.type) {
    case 'text':
    case 'inlineCode':
    case 'html':
      return node.value
    case 'break':
      return '\n'
    case 'image':
      return node.alt ?? ''
    case 'strong':
    case 'emphasis':
    case 'delete':
      return `${ATTENTION_EDGE}${node.children.map(plainText).join('')}${ATTENTION_EDGE}`
    default:
      return 'children' in node ? (node.children as PhrasingContent[]).map(plainText).join('') : ''
  }
}

/**
 * Where attention starts or ends, in `textAfter`'s text (a noncharacter: text holding one only escapes
 * more). A space or tab beside it may be written as a character reference (`[a]:x~~&#x20;y~~`:
 * attention-markers.ts), which is no whitespace to the parser, so whitespace there counts as none and the
 * definition that forms as written has its `[` escaped.
 */
const ATTENTION_EDGE = '\uFFFF'
const WHITESPACE_AT_EDGE = /[ \t]*\uFFFF[ \t]*/g

/**
 * Whether a `[` starting a paragraph's first text must be escaped: when a definition or, in a list item,
 * a checkbox would form with what follows it in the paragraph, read as far as LABEL_LOOKAHEAD_CHARS.
 */
function openingBracketUnsafe(state: State, value: string, parent: Parents, index: number): boolean {
  // Only the first LABEL_LOOKAHEAD_CHARS decide, so a read cut short decides alike (block-prefix.ts); a
  // label not closed within them is escaped.
  const window = LABEL_LOOKAHEAD_CHARS
  const rest = (
    value.length >= window ? value : value + textAfter(parent.children as PhrasingContent[], index, window)
  )
    .slice(0, window)
    .replace(WHITESPACE_AT_EDGE, 'x')
  if (!rest.includes(']')) return true
  if (DEFINITION_START.test(rest) && !NOT_A_DEFINITION.test(rest)) return true
  return state.stack.includes('listItem') && CHECKBOX_START.test(rest)
}

/**
 * The pattern lists of one text: `relaxed` (no `(` after `]` rule) for offsets before `until`; `markers`
 * when both hold MARKER_UNSAFE.
 */
type Lists = { strict: Unsafe[]; relaxed: Unsafe[]; until: number; markers: boolean }

/** `state.safe` for `text.slice(from, to)` with the list each part of it takes (see Lists). */
function safePart(state: State, text: string, from: number, to: number, config: SafeConfig, lists: Lists) {
  if (lists.until <= from) return state.safe(text.slice(from, to), config)
  const split = Math.min(lists.until, to)
  state.unsafe = lists.relaxed
  const head = state.safe(
    text.slice(from, split),
    split < to ? { ...config, after: text.charAt(split) } : config,
  )
  state.unsafe = lists.strict
  if (split === to) return head
  return (
    head +
    state.safe(text.slice(split, to), { ...config, before: text.charAt(split - 1), beforeNode: undefined })
  )
}

/**
 * `state.safe` for `text.slice(start, end)`, skipped when nothing in it can need an escape. The `*` and `_`
 * at the offsets `free` (free-delimiters.ts: they cannot form emphasis) are written as they are, the rest
 * around them escaped with them as context; one at a line start keeps the library's rules (a bullet, a rule).
 */
function safeStretch(
  state: State,
  text: string,
  start: number,
  end: number,
  config: SafeConfig & Info,
  free: readonly number[] | undefined,
  lists: Lists,
): string {
  const stretch = start === 0 && end === text.length ? text : text.slice(start, end)
  if (!mayNeedEscape(state, stretch, config.before, lists.markers)) return stretch
  let out = ''
  let from = start
  for (const at of free ?? []) {
    if (at < from || at >= end || LINE_START.test(config.before + text.slice(start, at))) continue
    if (at > from) {
      out += safePart(
        state,
        text,
        from,
        at,
        {
          ...config,
          before: from === start ? config.before : text.charAt(from - 1),
          after: text.charAt(at),
          beforeNode: from === start ? config.beforeNode : undefined,
          afterNode: undefined,
        },
        lists,
      )
    }
    out += text.charAt(at)
    from = at + 1
  }
  if (from === start) return safePart(state, text, start, end, config, lists)
  if (from === end) return out
  const rest = { ...config, before: text.charAt(from - 1), beforeNode: undefined }
  return out + safePart(state, text, from, end, rest, lists)
}

/** Whether the tag at `start` of `value` may be written unescaped (see the module comment). */
function rawTagAllowed(state: State, node: Text, start: number, tag: string, before: string): boolean {
  if (MARK_OR_BREAK_TAG.test(tag) || /[\r\n]/.test(tag)) return false
  if (!tagMeantAsHtml(tag)) return false
  if (tag.includes('|') && state.stack.includes('tableCell')) return false
  const value = node.value
  const lineStart = LINE_START.test(before + value.slice(0, start))
  if (!lineStart) return true
  const rest = value.slice(start).split(/[\r\n]/)[0]!
  return !HTML_BLOCK_START.test(rest) && !HTML_BLOCK_TAG_LINE.test(rest)
}

/**
 * What inline-to-mdast.ts hands a text node: the offsets of its `*` and `_` that cannot form emphasis
 * (free-delimiters.ts), and how far no `[` before it could make `](` a link.
 */
export type TextData = {
  free?: readonly number[]
  /** The offset before which a `(` after `]` needs no escape (no `[` before it in the block). */
  parenFree?: number
  /** Shown with pending suggestions: a marker's braces are escaped (MARKER_UNSAFE). */
  markers?: boolean
}

/**
 * mdast-util-to-markdown's text handler with the narrowed patterns, writing inline HTML tags its author
 * meant as they are. Plain stretches go through `safeStretch` with the neighbouring characters as context.
 */
export const textHandler: Handle = (node, parent, state, info) => {
  const text = node as Text
  const value = text.value
  const data = text.data as TextData | undefined
  const markers = data?.markers === true
  if (!mayNeedEscape(state, value, info.before, markers)) return value
  const siblings = parent ? parent.children : []
  const index = state.indexStack[state.indexStack.length - 1] ?? -1
  const around = { ...info, afterNode: siblings[index + 1], beforeNode: siblings[index - 1] }
  const lineBreaks = /[\r\n]/.test(value)
  // Free delimiters are only worked out for text without line breaks (imports have none).
  const free = lineBreaks ? undefined : data?.free
  // A `[` opening the paragraph: escaped here when it must be (with breaks in the text, by the patterns).
  // After a hard break, a footnote's `[^1]:` would start a definition of its own when the paragraph is a
  // footnote definition (footnotes.ts reads each as its own paragraph), and nothing elsewhere: escaped.
  if (
    !lineBreaks &&
    value.charCodeAt(0) === 91 &&
    parent?.type === 'paragraph' &&
    LINE_START.test(info.before) &&
    (index === 0
      ? openingBracketUnsafe(state, value, parent, index)
      : siblings[index - 1]?.type === 'break' && FOOTNOTE_DEFINITION.test(value))
  ) {
    const parenFree = data?.parenFree === undefined ? undefined : Math.max(0, data.parenFree - 1)
    const restData: TextData = { free: free?.map((at) => at - 1), parenFree, markers }
    const rest: Text = { type: 'text', value: value.slice(1), data: restData }
    return `\\[${textHandler(rest, parent, state, { ...info, before: '[' })}`
  }
  const saved = state.unsafe
  const strict = markersIf(markers, unsafeForText(state, lineBreaks, false))
  const relaxed = lineBreaks ? strict : markersIf(markers, unsafeForText(state, false, true))
  const lists: Lists = { strict, relaxed, until: lineBreaks ? 0 : (data?.parenFree ?? 0), markers }
  state.unsafe = strict
  try {
    let out = ''
    let from = 0
    for (let at = value.indexOf('<'); at !== -1; at = value.indexOf('<', at + 1)) {
      const tag = HTML_TAG_RE.exec(value.slice(at))?.[0]
      if (!tag || !rawTagAllowed(state, text, at, tag, info.before)) continue
      // The stretch before the tag, escaped as if the tag's `<` followed it (a `\` before it is doubled).
      const config = {
        ...around,
        before: from === 0 ? info.before : value.charAt(from - 1),
        after: '<',
        afterNode: undefined,
        beforeNode: from === 0 ? around.beforeNode : undefined,
      }
      out += safeStretch(state, value, from, at, config, free, lists)
      out += tag
      from = at + tag.length
      at = from - 1
    }
    if (from === 0) return safeStretch(state, value, 0, value.length, around, free, lists)
    const config = { ...around, before: value.charAt(from - 1), beforeNode: undefined }
    return out + safeStretch(state, value, from, value.length, config, free, lists)
  } finally {
    state.unsafe = saved
  }
}
