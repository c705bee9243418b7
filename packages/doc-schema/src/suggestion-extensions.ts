import { Mark } from '@tiptap/core'
import { SUGGESTION_DELETE, SUGGESTION_INSERT } from './suggestion-marks.ts'

/**
 * The suggestion marks as TipTap extensions (what they are: suggestion-marks.ts). Apart from the names,
 * so that the server's readers of suggestions do not load TipTap (lazy-libs.ts).
 */
function suggestionMark(name: string, tag: 'ins' | 'del') {
  return Mark.create({
    name,
    // Typing next to a suggestion is the person's own text, never part of the agent's proposal.
    inclusive: false,
    // Both kinds may cover the same text only as a suggestion of each (a deletion of a proposed insertion
    // is the insertion rejected), so each excludes only itself.
    excludes: name,
    addAttributes() {
      return {
        id: { default: null, renderHTML: (a) => (a.id ? { 'data-suggestion': a.id } : {}) },
        userId: { default: null, renderHTML: () => ({}) },
        author: { default: null, renderHTML: (a) => (a.author ? { 'data-author': a.author } : {}) },
        at: { default: null, renderHTML: (a) => (a.at ? { 'data-at': a.at } : {}) },
      }
    },
    // Never read from HTML: a pasted <ins> must not make the person's text look like an agent's proposal.
    parseHTML() {
      return []
    },
    renderHTML({ HTMLAttributes }) {
      return [tag, { ...HTMLAttributes, class: `suggestion suggestion-${tag}` }, 0]
    },
  })
}

export const SuggestionInsert = suggestionMark(SUGGESTION_INSERT, 'ins')
export const SuggestionDelete = suggestionMark(SUGGESTION_DELETE, 'del')
