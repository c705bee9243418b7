/**
 * `state.safe` (mdast-util-to-markdown's escaping of a string with its `unsafe` patterns), giving the same
 * bytes at a fraction of the cost per call. The library's walks every pattern of the state's list for
 * every string: tests whether the construct stack puts it in scope (a search of the stack per construct
 * it names), then runs its expression over the string, ~55 of them for text however short. Here the
 * patterns in scope are worked out once per list and construct stack, grouped by the character they act
 * on, and only the groups whose character occurs in the string are run; what follows (which matches win,
 * the intraword `_` rule, backslashes, character references) is the library's procedure unchanged.
 */
import type { Nodes } from 'mdast'
import type { SafeConfig, State, Unsafe } from 'mdast-util-to-markdown'
import { characterReference, classify, codeBefore } from './attention-markers.ts'

/** The in-scope patterns of one list under one construct stack, by the character each acts on. */
type Scoped = Array<[character: string, patterns: Unsafe[]]>

const scopedByList = new WeakMap<Unsafe[], Map<string, Scoped>>()

function inList(stack: readonly string[], list: Unsafe['inConstruct'], none: boolean): boolean {
  if (list === undefined || list === null) return none
  const names = typeof list === 'string' ? [list] : list
  if (names.length === 0) return none
  return names.some((name) => stack.includes(name))
}

function scopedPatterns(state: State): Scoped {
  let byStack = scopedByList.get(state.unsafe)
  if (!byStack) {
    byStack = new Map()
    scopedByList.set(state.unsafe, byStack)
  }
  const key = state.stack.join(' ')
  let scoped = byStack.get(key)
  if (!scoped) {
    const groups = new Map<string, Unsafe[]>()
    for (const pattern of state.unsafe) {
      if (
        !inList(state.stack, pattern.inConstruct, true) ||
        inList(state.stack, pattern.notInConstruct, false)
      )
        continue
      const group = groups.get(pattern.character)
      if (group) group.push(pattern)
      else groups.set(pattern.character, [pattern])
    }
    scoped = [...groups]
    byStack.set(key, scoped)
  }
  return scoped
}

function nodeMatches(types: Unsafe['beforeNode'], node: Nodes | undefined): boolean {
  if (!types) return true
  if (!node) return false
  return typeof types === 'string' ? types === node.type : types.includes(node.type)
}

const ASCII_PUNCTUATION = /[!-/:-@[-`{-~]/
/** A backslash that would escape the punctuation after it. */
const BACKSLASH_BEFORE_PUNCTUATION = /\\(?=[!-/:-@[-`{-~])/g

/** `value` with a backslash added before each backslash that `after` or its own text would make an escape. */
function keepBackslashes(value: string, after: string): string {
  if (!value.includes('\\') && !after.includes('\\')) return value
  let out = ''
  let start = 0
  for (const match of (value + after).matchAll(BACKSLASH_BEFORE_PUNCTUATION)) {
    out += `${value.slice(start, match.index)}\\`
    start = match.index
  }
  return out + value.slice(start)
}

/** Where an escape goes, and whether the pattern that asked for it looked before and after it. */
type Found = { before: boolean; after: boolean }

/** What `state.safe(input, config)` returns, for the same state. */
export function fastSafe(state: State, input: string | null | undefined, config: SafeConfig): string {
  const head = config.before || ''
  const tail = config.after || ''
  const value = head + (input || '') + tail
  const percentEncode = state.stack.includes('autolink')
  const offset = head.length
  const end = value.length - tail.length
  const found = new Map<number, Found>()
  for (const [character, patterns] of scopedPatterns(state)) {
    if (!value.includes(character)) continue
    for (const pattern of patterns) {
      if (
        !nodeMatches(pattern.beforeNode, config.beforeNode) ||
        !nodeMatches(pattern.afterNode, config.afterNode)
      )
        continue
      const expression = state.compilePattern(pattern)
      const from = pattern.beforeNode ? offset : 0
      const subject = value.slice(from, pattern.afterNode ? end : undefined)
      const before = Boolean(pattern.before || pattern.atBreak)
      const after = Boolean(pattern.after)
      for (let match = expression.exec(subject); match; match = expression.exec(subject)) {
        const position = from + match.index + (before ? match[1]!.length : 0)
        const known = found.get(position)
        if (known) {
          if (known.before && !before) known.before = false
          if (known.after && !after) known.after = false
        } else found.set(position, { before, after })
      }
    }
  }
  if (found.size === 0)
    return percentEncode ? value.slice(offset, end) : keepBackslashes(value.slice(offset, end), tail)
  const positions = [...found.keys()].sort((a, b) => a - b)
  const result: string[] = []
  let start = offset
  for (let index = 0; index < positions.length; index++) {
    const position = positions[index]!
    if (position < start || position >= end) continue
    // An intraword run of `_` (`a_b`, `a__b`) cannot form attention: left as it is when every `_` of it is
    // unsafe only by that and letters (not next to a marker, where they may become references) surround it.
    if (
      value.charAt(position) === '_' &&
      position > 0 &&
      classify(codeBefore(value, position)) === undefined &&
      !found.has(position - 1) &&
      !(position - 1 === offset && /[*_]/.test(value.charAt(offset - 1)))
    ) {
      let runEnd = position + 1
      while (runEnd < end && value.charAt(runEnd) === '_') runEnd++
      const skip = runEnd - position - 1
      if (
        positions[index + skip] === runEnd - 1 &&
        runEnd < value.length &&
        classify(value.codePointAt(runEnd)) === undefined &&
        !found.has(runEnd) &&
        !(runEnd === end - 1 && /[*_]/.test(value.charAt(end)))
      ) {
        index += skip
        continue
      }
    }
    const info = found.get(position)!
    // Escaped anyway by its neighbour's unconditional escape: the condition it had is gone.
    const nextInfo = positions[index + 1] === position + 1 ? found.get(position + 1) : undefined
    const previousInfo = positions[index - 1] === position - 1 ? found.get(position - 1) : undefined
    if (
      (position + 1 < end && nextInfo && info.after && !nextInfo.before && !nextInfo.after) ||
      (position - 1 >= offset && previousInfo && info.before && !previousInfo.before && !previousInfo.after)
    )
      continue
    if (start !== position) {
      const slice = value.slice(start, position)
      result.push(percentEncode ? slice : keepBackslashes(slice, '\\'))
    }
    start = position + 1
    const character = value.charAt(position)
    if (percentEncode) {
      result.push(`%${value.charCodeAt(position).toString(16).toUpperCase().padStart(2, '0')}`)
    } else if (ASCII_PUNCTUATION.test(character) && !config.encode?.includes(character)) {
      result.push(`\\${character}`)
    } else {
      result.push(characterReference(value.charCodeAt(position)))
    }
  }
  const rest = value.slice(start, end)
  result.push(percentEncode ? rest : keepBackslashes(rest, tail))
  return result.join('')
}
