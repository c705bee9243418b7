/**
 * What changed between two states of a document, by section: sections added, removed and changed (by
 * heading id; a section whose id and rev are unchanged is not rendered at all), each changed section with a
 * block-level diff (its heading and blocks as numbered section reads show them), and the characters that
 * went in and out. Used for a version's summary (what it changed since the version before it) and by
 * the MCP tool changes_since.
 */
import {
  blockMarkdown,
  type FlatDocument,
  FRAGMENT_NAME,
  flatBlockMarkdown,
  flatTopLevel,
  HEADING_ID_ATTR,
  isHeadingId,
  type OutlineNode,
  readFlat,
  readOutline,
  readOutlineOf,
} from '@collab/doc-schema'
import * as Y from 'yjs'

/** Blocks of one section beyond which the block diff pairs the middle as removed-then-added (LCS bound). */
export const MAX_DIFF_CELLS = 1_000_000

/** One line of a section's block diff: a block removed (`-`, its number before) or added (`+`, after). */
export type BlockChange = { op: '-' | '+'; block: number; text: string }

export type SectionChange = {
  kind: 'added' | 'removed' | 'changed'
  /** The heading id; '' when the heading has none (then matched by position among such headings). */
  sectionId: string
  title: string
  blocks: BlockChange[]
  charsIn: number
  charsOut: number
  /**
   * False when the comparison reached MAX_DIFF_RENDER_CHARS before this section: it is named (by its rev it
   * changed) but its blocks and characters are not compared (`blocks` empty, counts 0).
   */
  compared: boolean
}

/**
 * A section as the diff sees it: heading id, title, rev (from the outline) and its top-level elements, each
 * rendered as a section read shows it (`blockMarkdown`) only when the section is compared.
 */
type Section = {
  key: string
  sectionId: string
  title: string
  rev: string
  elements: Array<() => string>
}

function flatOutline(roots: readonly OutlineNode[]): OutlineNode[] {
  const out: OutlineNode[] = []
  const stack = [...roots].reverse()
  while (stack.length > 0) {
    const node = stack.pop()!
    out.push(node)
    for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i]!)
  }
  return out
}

/** The document's sections in order; blocks before the first heading are one section with key `#top`. */
function sectionsOf(fragment: Y.XmlFragment): Section[] {
  return sectionsFrom(readOutline(fragment), (each) => {
    for (const child of fragment.toArray()) {
      if (!(child instanceof Y.XmlElement)) continue
      const id = child.nodeName === 'heading' ? child.getAttribute(HEADING_ID_ATTR) : undefined
      each(child.nodeName === 'heading', id, () => blockMarkdown(child))
    }
  })
}

/**
 * `sectionsOf` of a state read flat (doc-schema yjs/flat-read.ts): the same sections, no Y.Doc; `outline`
 * when the caller has read it already (a walk of the whole document hashing every section).
 */
function sectionsOfFlat(
  flat: FlatDocument,
  outline: readonly OutlineNode[] = readOutlineOf(flat.tree, flatTopLevel(flat)),
): Section[] {
  return sectionsFrom(outline, (each) => {
    for (const item of flat.topLevel()) {
      if (item.name === null) continue
      const heading = item.name === 'heading'
      each(heading, heading ? flat.attribute(item, HEADING_ID_ATTR) : undefined, () =>
        flatBlockMarkdown(flat, item),
      )
    }
  })
}

/**
 * Sections from a document's outline and its top-level elements in order (`walk` calls `each` for every
 * element: whether it is a heading, its id attribute, and how to render it).
 */
function sectionsFrom(
  outline: readonly OutlineNode[],
  walk: (each: (heading: boolean, id: unknown, markdown: () => string) => void) => void,
): Section[] {
  const nodes = flatOutline(outline)
  const sections: Section[] = []
  let current: Section | undefined
  let headings = 0
  let unnamed = 0
  walk((heading, id, markdown) => {
    if (heading) {
      const node = nodes[headings++]
      const sectionId = isHeadingId(id) ? id : ''
      current = {
        key: sectionId || `#${unnamed++}`,
        sectionId,
        title: node?.title ?? '',
        rev: node?.rev ?? '',
        elements: [markdown],
      }
      sections.push(current)
      return
    }
    if (!current) {
      current = { key: '#top', sectionId: '', title: '', rev: '', elements: [] }
      sections.push(current)
    }
    current.elements.push(markdown)
  })
  return sections
}

/** The state's fragment, in a document of its own (gc off: nothing is collected while it is read). */
export function fragmentOfState(state: Uint8Array | null): Y.XmlFragment {
  const doc = new Y.Doc({ gc: false })
  if (state && state.byteLength > 0) Y.applyUpdate(doc, state)
  return doc.getXmlFragment(FRAGMENT_NAME)
}

/**
 * What changed from a stored state (null: an empty document) to `after`: the state decoded, compared with
 * diffFragments, and let go whatever the comparison does.
 */
export function diffSinceState(state: Uint8Array | null, after: Y.XmlFragment): SectionChange[] {
  const before = fragmentOfState(state)
  try {
    return diffFragments(before, after)
  } finally {
    before.doc?.destroy()
  }
}

/** Characters of block Markdown one comparison renders at most (both states together): bounds its work. */
export const MAX_DIFF_RENDER_CHARS = 400_000

/**
 * Each element's Markdown (the heading is block 0, then [1], [2]… as section reads number them), counted
 * against the comparison's budget; null when the budget ran out (the section is not compared).
 */
function linesOf(section: Section, budget: { left: number }): string[] | null {
  const lines: string[] = []
  for (const element of section.elements) {
    if (budget.left <= 0) return null
    const markdown = element()
    budget.left -= markdown.length
    lines.push(markdown)
  }
  return budget.left >= 0 ? lines : null
}

function blockDiff(
  before: string[],
  after: string[],
): { blocks: BlockChange[]; charsIn: number; charsOut: number } {
  let start = 0
  while (start < before.length && start < after.length && before[start] === after[start]) start++
  let endBefore = before.length
  let endAfter = after.length
  while (endBefore > start && endAfter > start && before[endBefore - 1] === after[endAfter - 1]) {
    endBefore--
    endAfter--
  }
  const removed: number[] = []
  const added: number[] = []
  const n = endBefore - start
  const m = endAfter - start
  if (n > 0 && m > 0 && n * m <= MAX_DIFF_CELLS) {
    // Longest common subsequence of the middle, by table (bounded by MAX_DIFF_CELLS).
    const table = new Uint32Array((n + 1) * (m + 1))
    for (let i = n - 1; i >= 0; i--)
      for (let j = m - 1; j >= 0; j--)
        table[i * (m + 1) + j] =
          before[start + i] === after[start + j]
            ? table[(i + 1) * (m + 1) + j + 1]! + 1
            : Math.max(table[(i + 1) * (m + 1) + j]!, table[i * (m + 1) + j + 1]!)
    let i = 0
    let j = 0
    while (i < n && j < m) {
      if (before[start + i] === after[start + j]) {
        i++
        j++
      } else if (table[(i + 1) * (m + 1) + j]! >= table[i * (m + 1) + j + 1]!) removed.push(start + i++)
      else added.push(start + j++)
    }
    while (i < n) removed.push(start + i++)
    while (j < m) added.push(start + j++)
  } else {
    for (let i = start; i < endBefore; i++) removed.push(i)
    for (let j = start; j < endAfter; j++) added.push(j)
  }
  // Characters: a removed block paired with an added one (in order) counts only what differs between
  // them (common start and end trimmed); unpaired blocks count whole.
  let charsIn = 0
  let charsOut = 0
  const pairs = Math.min(removed.length, added.length)
  for (let p = 0; p < pairs; p++) {
    const [out, into] = changedChars(before[removed[p]!]!, after[added[p]!]!)
    charsOut += out
    charsIn += into
  }
  for (let p = pairs; p < removed.length; p++) charsOut += before[removed[p]!]!.length
  for (let p = pairs; p < added.length; p++) charsIn += after[added[p]!]!.length
  const blocks: BlockChange[] = [
    ...removed.map((index) => ({ op: '-' as const, block: index, text: before[index]! })),
    ...added.map((index) => ({ op: '+' as const, block: index, text: after[index]! })),
  ].sort((a, b) => a.block - b.block || (a.op === '-' ? -1 : 1))
  return { blocks, charsIn, charsOut }
}

function changedChars(a: string, b: string): [number, number] {
  let start = 0
  const shortest = Math.min(a.length, b.length)
  while (start < shortest && a.charCodeAt(start) === b.charCodeAt(start)) start++
  let endA = a.length
  let endB = b.length
  while (endA > start && endB > start && a.charCodeAt(endA - 1) === b.charCodeAt(endB - 1)) {
    endA--
    endB--
  }
  return [endA - start, endB - start]
}

/**
 * The changes turning `before` into `after`: sections of `after` in its order (added or changed), then
 * the removed ones in `before`'s order. Only sections whose rev differs are rendered.
 */
export function diffFragments(
  before: Y.XmlFragment,
  after: Y.XmlFragment,
  maxRenderChars = MAX_DIFF_RENDER_CHARS,
): SectionChange[] {
  return diffSections(sectionsOf(before), sectionsOf(after), maxRenderChars)
}

/**
 * What changed from a stored state (null: an empty document) to a state read flat (`after`), neither
 * decoded into a Y.Doc when the stored state reads flat too: the compaction's version summary on the
 * documents' worker (worker/compact.ts), where a decoded copy of a document at the item limit was most
 * of the server's memory peak (issue 24).
 */
export function diffSinceStateFlat(
  state: Uint8Array | null,
  after: FlatDocument,
  /** `after`'s outline, when the caller has read it (`readOutlineOf`). */
  afterOutline?: readonly OutlineNode[],
): SectionChange[] {
  const now = sectionsOfFlat(after, afterOutline)
  const flat = state && state.byteLength > 0 ? readFlat(state, FRAGMENT_NAME) : null
  if (flat || !state || state.byteLength === 0) return diffSections(flat ? sectionsOfFlat(flat) : [], now)
  const before = fragmentOfState(state)
  try {
    return diffSections(sectionsOf(before), now)
  } finally {
    before.doc?.destroy()
  }
}

function diffSections(
  old: readonly Section[],
  now: readonly Section[],
  maxRenderChars = MAX_DIFF_RENDER_CHARS,
): SectionChange[] {
  const budget = { left: maxRenderChars }
  const oldByKey = new Map(old.map((section) => [section.key, section]))
  const seen = new Set<string>()
  const changes: SectionChange[] = []
  for (const section of now) {
    const was = oldByKey.get(section.key)
    seen.add(section.key)
    if (was && was.rev === section.rev && was.rev !== '') continue
    const { sectionId, title } = section
    const kind = was ? 'changed' : 'added'
    const lines = linesOf(section, budget)
    const oldLines = was ? linesOf(was, budget) : []
    if (!lines || !oldLines) {
      changes.push({ kind, sectionId, title, blocks: [], charsIn: 0, charsOut: 0, compared: false })
      continue
    }
    const { blocks, charsIn, charsOut } = blockDiff(oldLines, lines)
    if (was && blocks.length === 0) continue
    changes.push({ kind, sectionId, title, blocks, charsIn, charsOut, compared: true })
  }
  for (const section of old) {
    if (seen.has(section.key)) continue
    const lines = linesOf(section, budget)
    const { blocks, charsOut } = blockDiff(lines ?? [], [])
    changes.push({
      kind: 'removed',
      sectionId: section.sectionId,
      title: section.title,
      blocks,
      charsIn: 0,
      charsOut,
      compared: lines !== null,
    })
  }
  return changes
}

/** Sections one summary names at most (the counts stay exact beyond it). */
export const MAX_SUMMARY_SECTIONS = 20

/** A version's "what": counts, characters, and the first sections it names (`+` added, `-` removed, `~` changed). */
export type ChangeSummary = {
  added: number
  removed: number
  changed: number
  charsIn: number
  charsOut: number
  sections: Array<{ k: '+' | '-' | '~'; id: string; t: string }>
  /** Whether `sections` lists every section counted (merged summaries can then be merged exactly). */
  complete: boolean
}

const KIND_MARK = { added: '+', removed: '-', changed: '~' } as const

export function summarize(changes: readonly SectionChange[]): ChangeSummary {
  const summary: ChangeSummary = {
    added: 0,
    removed: 0,
    changed: 0,
    charsIn: 0,
    charsOut: 0,
    sections: [],
    complete: true,
  }
  for (const change of changes) {
    summary[change.kind]++
    summary.charsIn += change.charsIn
    summary.charsOut += change.charsOut
    if (summary.sections.length < MAX_SUMMARY_SECTIONS)
      summary.sections.push({
        k: KIND_MARK[change.kind],
        id: change.sectionId,
        t: change.title.slice(0, 200),
      })
    else summary.complete = false
  }
  return summary
}

/**
 * One summary for two consecutive ones (a thinned version's changes go to the version after it): a
 * section added then removed is neither, added then changed stays added, changed then removed is removed.
 * Characters add up (what went in and out along the way).
 */
export function mergeSummaries(
  older: ChangeSummary | null,
  newer: ChangeSummary | null,
): ChangeSummary | null {
  if (!older || !newer) return newer ?? older
  const charsIn = older.charsIn + newer.charsIn
  const charsOut = older.charsOut + newer.charsOut
  if (
    !older.complete ||
    !newer.complete ||
    older.sections.some((s) => !s.id) ||
    newer.sections.some((s) => !s.id)
  ) {
    return {
      added: older.added + newer.added,
      removed: older.removed + newer.removed,
      changed: older.changed + newer.changed,
      charsIn,
      charsOut,
      sections: [...older.sections, ...newer.sections].slice(0, MAX_SUMMARY_SECTIONS),
      complete: false,
    }
  }
  const byId = new Map(older.sections.map((s) => [s.id, { ...s }]))
  for (const section of newer.sections) {
    const was = byId.get(section.id)
    if (!was) byId.set(section.id, { ...section })
    else if (was.k === '+' && section.k === '-') byId.delete(section.id)
    else if (was.k === '+') byId.set(section.id, { ...section, k: '+' })
    else if (was.k === '-' && section.k === '+') byId.set(section.id, { ...section, k: '~' })
    else byId.set(section.id, { ...section })
  }
  const sections = [...byId.values()]
  const count = (k: '+' | '-' | '~') => sections.filter((s) => s.k === k).length
  return {
    added: count('+'),
    removed: count('-'),
    changed: count('~'),
    charsIn,
    charsOut,
    sections: sections.slice(0, MAX_SUMMARY_SECTIONS),
    complete: sections.length <= MAX_SUMMARY_SECTIONS,
  }
}
