/**
 * Which markers emphasis, strong and strikethrough are written with, and which characters next to them
 * become character references: the same choices mdast-util-to-markdown 2.2 makes (its `serialize` in
 * container-phrasing.js), reached in one pass. The library guesses a marker for each attention (one that
 * differs from its neighbours), writes the result, then checks how a CommonMark parser would pair the
 * delimiter runs; a wrong pair makes it try other markers, each trial writing and checking the whole
 * container again. Our content almost never needs that search: when the guess pairs as written, its text
 * is returned here; otherwise `undefined`, and the caller lets the library write the container.
 *
 * Two departures from the library, where its output reads back as other content: characters are
 * classified by code point (`classify`), and a delimiter run that a reference comes to touch is escaped
 * (`escapeRunAtEdge`).
 */

/** A run of attention (emphasis, strong, strikethrough) and what it holds, as the library's items. */
export type AttentionItem = {
  children: PhrasingItem[]
  /** The sequences it may be written with, preferred first (`*`, `_`; `**`, `__`; `~~`, `~`). */
  sequences: string[]
}

/** What a phrasing container holds once its children are written: text as written, or attention. */
export type PhrasingItem = string | AttentionItem

type Token = { value: string; attention: AttentionItem | undefined }

/** The first character of `value` (a whole code point), or '' (the library's `firstCharacter`). */
export function firstCharacter(value: string): string {
  const code = value.codePointAt(0)
  return code === undefined ? '' : String.fromCodePoint(code)
}

/** The last character of `value`, a surrogate pair whole (the library's `lastCharacter`). */
export function lastCharacter(value: string): string {
  const code = value.codePointAt(value.length - 2)
  return code !== undefined && code > 0xffff ? value.slice(-2) : value.slice(-1)
}

const WHITESPACE = /\s/
const PUNCTUATION = /\p{P}|\p{S}/u

/**
 * CommonMark's classes of a code point: 1 whitespace, 2 punctuation (Unicode P or S), undefined anything
 * else. A missing character (NaN, undefined) counts as neither. By code point, as markdown-it reads it: the
 * library classifies UTF-16 units, so an emoji (a symbol, punctuation) beside a marker counted as a letter,
 * and `b**😀b**` was written for strong text that reads back as none.
 */
export function classify(code: number | undefined): 1 | 2 | undefined {
  if (code === undefined || !(code > -1)) return undefined
  if (code === 32) return 1
  const character = String.fromCodePoint(code)
  if (WHITESPACE.test(character)) return 1
  return PUNCTUATION.test(character) ? 2 : undefined
}

/** The code point that ends `value` before `end` (its length by default; a surrogate pair whole), or undefined. */
export function codeBefore(value: string, end = value.length): number | undefined {
  if (end <= 0) return undefined
  const low = value.charCodeAt(end - 1)
  if ((low & 0xfc00) !== 0xdc00 || end < 2) return low
  const high = value.charCodeAt(end - 2)
  return (high & 0xfc00) === 0xd800 ? 0x10000 + ((high - 0xd800) << 10) + (low - 0xdc00) : low
}

/** A character reference (`&#x20;`): how the library encodes a character that would stop attention forming. */
export const characterReference = (code: number) => `&#x${code.toString(16).toUpperCase()};`

/**
 * Whether the character inside an attention marker and the one outside it must be encoded so the marker
 * still opens or closes (the library's `encodeInfo`): punctuation is never encoded.
 */
function encodeSides(
  outside: number | undefined,
  inside: number | undefined,
  marker: string,
): { inside: boolean; outside: boolean } {
  const out = classify(outside)
  const inn = classify(inside)
  if (out === undefined) {
    if (inn === undefined) return marker === '_' ? BOTH : NEITHER
    return inn === 1 ? BOTH : OUTSIDE
  }
  if (out === 1) return inn === 1 ? BOTH : NEITHER
  return inn === 1 ? INSIDE : NEITHER
}
const BOTH = { inside: true, outside: true }
const NEITHER = { inside: false, outside: false }
const OUTSIDE = { inside: false, outside: true }
const INSIDE = { inside: true, outside: false }

/** Characters that make delimiter runs, whose flanking depends on the characters beside them. */
const isDelimiter = (code: number) => code === 42 || code === 95 || code === 126

/**
 * `value` with each unescaped `*`, `_` or `~` of the run at its start (`start`) or end escaped. The text's
 * escaping was chosen beside the character a reference now replaces: a space or letter there made the run
 * inert, and the reference's `;` or `&` (punctuation) can make it open or close. The library's writer leaves
 * such a run as it is (`**&#x20;* a**` reads back as other emphasis); ours escapes it.
 */
function escapeRunAtEdge(value: string, start: boolean): string {
  if (start) {
    let end = 0
    while (end < value.length && isDelimiter(value.charCodeAt(end))) end++
    return end ? value.slice(0, end).replace(/[*_~]/g, '\\$&') + value.slice(end) : value
  }
  let begin = value.length
  while (begin > 0 && isDelimiter(value.charCodeAt(begin - 1))) begin--
  if (begin === value.length) return value
  let escapes = 0
  while (value.charCodeAt(begin - 1 - escapes) === 92) escapes++
  // An odd count of backslashes already escapes the run's first character.
  if (escapes % 2) begin++
  return value.slice(0, begin) + value.slice(begin).replace(/[*_~]/g, '\\$&')
}

/** Encodes the first (`start`) or last character of the first or last token, when it is text. */
function encodeEdge(tokens: Token[], start: boolean): void {
  const token = tokens[start ? 0 : tokens.length - 1]
  if (!token || token.attention) return
  const character = start ? firstCharacter(token.value) : lastCharacter(token.value)
  const ref = characterReference(character.codePointAt(0)!)
  if (start) {
    token.value = ref + escapeRunAtEdge(token.value.slice(character.length), true)
    return
  }
  let value = escapeRunAtEdge(token.value.slice(0, token.value.length - character.length), false)
  let escapes = 0
  while (value.charCodeAt(value.length - 1 - escapes) === 92) escapes++
  // A backslash left before the `&` would escape it.
  if (escapes % 2) value += '\\'
  token.value = value + ref
}

/**
 * The library's first guess: each attention takes its first sequence whose marker differs from the
 * character before it and, as the container's last item, the one after it.
 */
function guess(items: PhrasingItem[], chosen: Map<AttentionItem, string>, before: string, after: string) {
  let previous = before
  for (let index = 0; index < items.length; index++) {
    const item = items[index]!
    if (typeof item === 'string') {
      previous = ''
      continue
    }
    const next = index === items.length - 1 ? after : ''
    const first = item.sequences[0]!
    let sequence = first
    for (const value of item.sequences) {
      const marker = value.charAt(0)
      if (
        (marker !== previous.charAt(0) && marker !== next.charAt(0)) ||
        (items.length === 1 && (marker === '*' || marker === '_') && value.length > before.length)
      ) {
        sequence = value
        break
      }
    }
    if (sequence !== first) chosen.set(item, sequence)
    guess(item.children, chosen, sequence, sequence)
    previous = sequence
  }
}

/** The items as tokens with the chosen sequences, encoding characters where attention would not form. */
function render(items: PhrasingItem[], chosen: Map<AttentionItem, string>, before: string, after: string) {
  const tokens: Token[] = []
  let encodeAfter: string | undefined
  let previous = lastCharacter(before)
  for (let index = 0; index < items.length; index++) {
    const item = items[index]!
    if (typeof item === 'string') {
      const token: Token = { value: item, attention: undefined }
      if (encodeAfter && encodeAfter === firstCharacter(item)) encodeEdge([token], true)
      encodeAfter = undefined
      tokens.push(token)
      if (token.value) previous = lastCharacter(token.value)
      continue
    }
    const sequence = chosen.get(item) ?? item.sequences[0]!
    const marker = sequence.charAt(0)
    const next = items[index + 1]
    const outsideBefore = previous
    const outsideAfter = firstCharacter(
      next === undefined ? after : typeof next === 'string' ? next : (chosen.get(next) ?? next.sequences[0]!),
    )
    const inside = render(item.children, chosen, sequence, sequence)
    const head = inside[0]!.value
    const open = encodeSides(codeBefore(outsideBefore), head.codePointAt(0), marker)
    if (open.inside) encodeEdge(inside, true)
    const tail = lastCharacter(inside[inside.length - 1]!.value)
    const close = encodeSides(outsideAfter.codePointAt(0), tail.codePointAt(0), marker)
    if (close.inside) encodeEdge(inside, false)
    if (open.outside && outsideBefore !== '\n' && outsideBefore !== '\r') encodeEdge(tokens, false)
    if (close.outside) encodeAfter = outsideAfter
    tokens.push({ value: sequence, attention: item })
    for (const token of inside) tokens.push(token)
    tokens.push({ value: sequence, attention: item })
    previous = sequence.charAt(sequence.length - 1)
  }
  return tokens
}

/** A delimiter run of the written tokens: adjacent sequences of one marker character. */
type Run = {
  /** One entry per marker character: the token it belongs to. */
  markers: Token[]
  start: number
  end: number
  open: boolean
  close: boolean
  /** `*` and `_` runs split into pairs (rule of 3); others pair whole runs of the same size. */
  split: boolean
}

/**
 * Whether a CommonMark reader pairs every written sequence with its own other half: the library's
 * `check` and `pair`, answering only yes or no (a no sends the container to the library's search).
 * The scan over open runs is bounded: past `tokens.length * 4 + 64` steps the answer is no.
 */
function pairsAsWritten(tokens: Token[], before: string, after: string): boolean {
  const runs: Run[] = []
  let sequences = 0
  for (let index = 0; index < tokens.length; ) {
    if (!tokens[index]!.attention) {
      index++
      continue
    }
    const marker = tokens[index]!.value.charAt(0)
    let end = index + 1
    while (end < tokens.length && tokens[end]!.attention && tokens[end]!.value.charAt(0) === marker) end++
    const head = index ? tokens[index - 1]!.value : before
    const previous = classify(codeBefore(head))
    const next = classify((end < tokens.length ? tokens[end]!.value : after).codePointAt(0))
    const open = !next || (next === 2 && Boolean(previous))
    const close = !previous || (previous === 2 && Boolean(next))
    const strict = marker === '_'
    const split = marker === '_' || marker === '*'
    const markers: Token[] = []
    for (let at = index; at < end; at++) {
      const token = tokens[at]!
      for (let size = token.value.length; size > 0; size--) markers.push(token)
    }
    sequences += end - index
    runs.push({
      markers,
      start: 0,
      end: markers.length,
      // Underscores cannot open or close inside words.
      open: strict ? open && (Boolean(previous) || !close) : open,
      close: strict ? close && (Boolean(next) || !open) : close,
      split,
    })
    index = end
  }
  let paired = 0
  let steps = tokens.length * 4 + 64
  const openersByMarker = new Map<string, Run[]>()
  for (const closer of runs) {
    const marker = closer.markers[0]!.value.charAt(0)
    let openers = openersByMarker.get(marker)
    if (!openers) {
      openers = []
      openersByMarker.set(marker, openers)
    }
    let open = closer.close ? openers.length : 0
    while (open-- && closer.start < closer.end) {
      if (--steps < 0) return false
      const opener = openers[open]!
      const openerSize = opener.end - opener.start
      const closerSize = closer.end - closer.start
      if (
        closer.split
          ? (opener.close || closer.open) && closerSize % 3 && !((openerSize + closerSize) % 3)
          : openerSize !== opener.markers.length || openerSize !== closerSize
      )
        continue
      const size = closer.split ? (openerSize > 1 && closerSize > 1 ? 2 : 1) : closerSize
      const openToken = opener.markers[opener.end - size]!
      const closeToken = closer.markers[closer.start]!
      // Whole sequences of one attention: its opening and its closing.
      if (
        openToken !== opener.markers[opener.end - 1] ||
        openToken.value.length !== size ||
        closeToken !== closer.markers[closer.start + size - 1] ||
        closeToken.value.length !== size ||
        openToken.attention !== closeToken.attention
      )
        return false
      paired += 2
      opener.end -= size
      closer.start += size
      if (opener.start === opener.end) openers.splice(open, 1)
      open = openers.length
    }
    if (closer.open && closer.start < closer.end) openers.push(closer)
  }
  return paired === sequences
}

/**
 * The Markdown of a phrasing container's items between `before` and `after`, as the library writes it
 * when its guess pairs as written; `undefined` when the library would search further.
 */
export function writeAttention(items: PhrasingItem[], before: string, after: string): string | undefined {
  const chosen = new Map<AttentionItem, string>()
  guess(items, chosen, before, after)
  const tokens = render(items, chosen, before, after)
  if (!pairsAsWritten(tokens, before, after)) return undefined
  let result = ''
  for (const token of tokens) result += token.value
  return result
}
