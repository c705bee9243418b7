/**
 * Pending suggestions (docs/history.md, Suggestions): agents in suggest mode propose text, which the editor
 * draws as <ins> (underlined) and <del> (struck through) through the schema's marks. This panel lists each
 * proposal with its author and text, and lets someone who may write accept or reject it, or all of them.
 * A decision is an ordinary edit of the person's own document (the marks ended, the text deleted), which
 * the server's boundary allows; the server never lets an editor start a suggestion.
 */
import { type Decision, decideSuggestions, FRAGMENT_NAME, listSuggestions } from '@collab/doc-schema/editor'
import type * as Y from 'yjs'
import { clear, h, when } from './dom.ts'
import './suggestions.css'

/** Proposals the panel lists at most (the rest are decided with "all" or after these). */
const MAX_LISTED = 50
/** Characters of a proposal's text the panel shows. */
const MAX_SHOWN_CHARS = 160

export type SuggestionsPanel = {
  element: HTMLElement
  /** Starts following the document: the list is drawn again after each change. */
  attach(doc: Y.Doc): void
  setCanWrite(canWrite: boolean): void
}

export function suggestionsPanel(initialCanWrite: boolean): SuggestionsPanel {
  let canWrite = initialCanWrite
  let doc: Y.Doc | undefined
  let scheduled = false
  const heading = h('h2', { id: 'suggestions-heading' }, 'Suggestions')
  const list = h('ul')
  const note = h('p', { class: 'who' })
  const acceptAll = h('button', { type: 'button', onclick: () => decide('all', 'accept') }, 'Accept all')
  const rejectAll = h('button', { type: 'button', onclick: () => decide('all', 'reject') }, 'Reject all')
  const element = h(
    'section',
    { class: 'suggestions', 'aria-labelledby': 'suggestions-heading', hidden: true },
    heading,
    list,
    note,
    h('div', { class: 'suggestions-all' }, acceptAll, rejectAll),
  )

  function decide(ids: string[] | 'all', decision: Decision) {
    if (!doc || !canWrite) return
    decideSuggestions(doc.getXmlFragment(FRAGMENT_NAME), ids, decision)
  }

  // Pieces of one proposal (separate words of a sentence, several blocks) are shown joined by an ellipsis.
  const cut = (text: string) =>
    (text.length > MAX_SHOWN_CHARS ? `${text.slice(0, MAX_SHOWN_CHARS)}…` : text).replaceAll('\n', ' … ')

  function draw() {
    scheduled = false
    if (!doc) return
    const { suggestions, more } = listSuggestions(
      doc.getXmlFragment(FRAGMENT_NAME),
      MAX_LISTED,
      MAX_SHOWN_CHARS + 1,
    )
    element.hidden = suggestions.length === 0
    heading.textContent = `Suggestions (${suggestions.length}${more ? '+' : ''})`
    note.textContent = more ? `Showing the first ${MAX_LISTED}; decide these to see the rest.` : ''
    acceptAll.hidden = rejectAll.hidden = !canWrite
    clear(
      list,
      ...suggestions.map((s) => {
        const parts = [
          s.insertedChars > 0 ? `adds “${cut(s.inserted)}”` : '',
          s.deletedChars > 0 ? `removes “${cut(s.deleted)}”` : '',
        ].filter(Boolean)
        const what = parts.join(' and ')
        const who = `${s.author || 'an agent'}${s.at ? `, ${when(s.at)}` : ''}`
        return h(
          'li',
          { 'data-suggestion': s.id },
          h('span', { class: 'what' }, what, ' ', h('span', { class: 'who' }, `(${who})`)),
          canWrite
            ? h(
                'button',
                { type: 'button', 'aria-label': `Accept: ${what}`, onclick: () => decide([s.id], 'accept') },
                'Accept',
              )
            : null,
          canWrite
            ? h(
                'button',
                { type: 'button', 'aria-label': `Reject: ${what}`, onclick: () => decide([s.id], 'reject') },
                'Reject',
              )
            : null,
        )
      }),
    )
  }

  const schedule = () => {
    if (scheduled) return
    scheduled = true
    setTimeout(draw, 100)
  }

  return {
    element,
    attach(d) {
      doc = d
      d.on('update', schedule)
      schedule()
    },
    setCanWrite(value) {
      canWrite = value
      schedule()
    },
  }
}
