/**
 * An in_block edit's cost against its list's length: editBlocks with `inBlock` replacing item 900 of a
 * 1,000-item list beside the same edit of item 9 of a 10-item list. The line named is taken from the
 * section reads' own text before each edit (as an agent does: read, then edit by the numbers it saw; see
 * readTarget); the reads are untimed, the edit (which finds the line in the block again) is timed. Each edit changes the item,
 * so no edit finds the block as the previous edit left it.
 */
import {
  createDocumentUpdate,
  editBlocks,
  FRAGMENT_NAME,
  listSections,
  renderSection,
} from '@collab/doc-schema'
import { asFrag, Y, type YXmlFragment } from '../deps.ts'
import { timeSideBySide } from './stats.ts'
import { medianRatioRow, type Row } from './types.ts'

export const IN_BLOCK_ITEMS = { large: 1_000, small: 10 } as const

type ListDoc = { doc: Y.Doc; fragment: YXmlFragment; target: number; turn: number }

/** A document whose one section holds a bullet list of `items` items ("item 1 of a list …"). */
function listDocument(items: number, target: number): ListDoc {
  const list = Array.from({ length: items }, (_, i) => `- item ${i + 1} of a list, with a few words`)
  const update = createDocumentUpdate('Doc', `## List\n\n${list.join('\n')}\n\nafter`)
  if (update.kind === 'error') throw new Error(update.message)
  const doc = new Y.Doc()
  Y.applyUpdate(doc, update.value)
  return { doc, fragment: doc.getXmlFragment(FRAGMENT_NAME), target, turn: 0 }
}

/**
 * The section's id and rev, and the line of block 1 that item `target` is printed on, from reads at the
 * default budget: page after page (`fromBlock`, `blockOffset`) of the block until the item shows, its
 * lines counted over the parts shown, as an agent reading a long list does.
 */
function readTarget(list: ListDoc): { sectionId: string; rev: string; line: number } {
  const frag = asFrag(list.fragment)
  const section = listSections(frag)[1]!
  let shown = ''
  for (let offset = 0; ; ) {
    const read = renderSection(frag, section.sectionId, { fromBlock: 1, blockOffset: offset })
    if (read.kind === 'error') throw new Error(read.message)
    const { text, nextBlock, nextOffset } = read.value
    const label = offset > 0 ? `[1, from character ${offset}] ` : '[1] '
    const from = text.indexOf(label) + label.length
    const cut = nextBlock === 1 && nextOffset !== undefined
    const end = cut ? from + nextOffset - offset : text.indexOf('\n\n[2] ', from)
    shown += text.slice(from, end < 0 ? undefined : end)
    const line = shown.split('\n').findIndex((l) => l.includes(`item ${list.target} of`)) + 1
    if (line > 0) return { sectionId: section.sectionId, rev: section.rev, line }
    if (!cut) throw new Error(`item ${list.target} is not in the read`)
    offset = nextOffset
  }
}

/** Replaces item `target` by the numbers of `at` (each turn a different text, so every edit changes it). */
function edit(list: ListDoc, at: { sectionId: string; rev: string; line: number }) {
  list.turn++
  // In a transaction of its own, as the server applies an MCP edit (a direct connection's transact).
  let result: ReturnType<typeof editBlocks> | undefined
  list.doc.transact(() => {
    result = editBlocks(asFrag(list.fragment), at.sectionId, at.rev, {
      inBlock: 1,
      removeBlocks: [at.line],
      markdown: `- item ${list.target} of a list, edited ${list.turn} times`,
    })
  })
  if (!result) throw new Error('the edit did not run')
  if (result.kind === 'error') throw new Error(result.message)
  return result
}

export function measureInBlockEdit(runs: number): Row {
  const large = listDocument(IN_BLOCK_ITEMS.large, 900)
  const small = listDocument(IN_BLOCK_ITEMS.small, 9)
  const timed = timeSideBySide(runs, {
    '1,000 items': { prepare: () => readTarget(large), run: (at) => edit(large, at as never) },
    '10 items': { prepare: () => readTarget(small), run: (at) => edit(small, at as never) },
  })
  // Each edit changed the item its read named: the last one's text is where the item was.
  for (const list of [large, small]) {
    const { line } = readTarget(list)
    const block = list.fragment
      .toArray()
      .find((e) => e instanceof Y.XmlElement && e.nodeName === 'bulletList')
    const shown = (block as Y.XmlElement).toString()
    if (line !== list.target || !shown.includes(`edited ${list.turn} times`))
      throw new Error(`the edits of item ${list.target} did not land on it`)
  }
  large.doc.destroy()
  small.doc.destroy()
  return medianRatioRow(
    {
      measure: 'in_block edit of one item (item 900 / item 9), after a read, by list length',
      size: '1,000 / 10 items',
    },
    timed,
    { over: '1,000 items', under: '10 items' },
  )
}
