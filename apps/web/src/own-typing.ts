/**
 * What a person types is their own text, never part of an agent's proposal. Typing inside a proposed
 * insertion (or inside text proposed for deletion) would otherwise take on its suggestion mark: ProseMirror
 * carries a non-inclusive mark over to text typed in its middle, and Yjs writes no format item when the
 * new text's marks equal those around it, so the person's words would read as the agent's. This plugin
 * takes the suggestion marks off every range the local user's transaction inserts; changes that arrive
 * from the shared document (other people, agents, undo of a shared change) are left as they are.
 * The server repairs the same for editors without this plugin (collab/boundary.ts, docs/history.md).
 */
import { Extension } from '@tiptap/core'
import { isChangeOrigin } from '@tiptap/extension-collaboration'
import type { MarkType } from '@tiptap/pm/model'
import { Plugin, PluginKey, type Transaction } from '@tiptap/pm/state'

const SUGGESTION_MARK_NAMES = ['suggestionInsert', 'suggestionDelete']

/** The ranges of the final document that `tr`'s steps inserted, as [from, to) pairs. */
function insertedRanges(tr: Transaction): [number, number][] {
  const ranges: [number, number][] = []
  tr.steps.forEach((step, index) => {
    const later = tr.mapping.slice(index + 1)
    step.getMap().forEach((_oldStart, _oldEnd, newStart, newEnd) => {
      if (newEnd <= newStart) return
      const from = later.map(newStart, 1)
      const to = later.map(newEnd, -1)
      if (to > from) ranges.push([from, to])
    })
  })
  return ranges
}

export const OwnTyping = Extension.create({
  name: 'ownTyping',
  addProseMirrorPlugins() {
    const types = SUGGESTION_MARK_NAMES.map((name) => this.editor.schema.marks[name]).filter(
      (type): type is MarkType => type !== undefined,
    )
    return [
      new Plugin({
        key: new PluginKey('ownTyping'),
        appendTransaction(transactions, _old, state) {
          let fix: Transaction | undefined
          transactions.forEach((tr, index) => {
            if (!tr.docChanged || isChangeOrigin(tr)) return
            // Ranges in the final document: through the transactions after this one too.
            const after = transactions.slice(index + 1)
            for (const [start, stop] of insertedRanges(tr)) {
              const from = after.reduce((at, next) => next.mapping.map(at, 1), start)
              const to = Math.min(
                after.reduce((at, next) => next.mapping.map(at, -1), stop),
                state.doc.content.size,
              )
              if (to <= from) continue
              for (const type of types) {
                if (!state.doc.rangeHasMark(from, to, type)) continue
                fix ??= state.tr
                fix.removeMark(from, to, type)
              }
            }
          })
          return fix
        },
      }),
    ]
  },
})
