/**
 * The keyboard shortcuts of the editor page, in one list: the toolbar's titles name them from here and the
 * help dialog (the toolbar's `?` button, Ctrl/⌘+/ anywhere, `?` outside the text) shows them all. The keys
 * are TipTap's own bindings of the schema's extensions, plus this page's Ctrl/⌘+K (link) and Ctrl/⌘+/.
 */
import { h } from './dom.ts'

/** ⌘ on Apple machines (TipTap's `Mod`), Ctrl elsewhere. */
export const MOD =
  typeof navigator !== 'undefined' && /Mac|iPhone|iPad/.test(navigator.platform || navigator.userAgent)
    ? '⌘'
    : 'Ctrl'

/** `Mod-Shift-8` as a person reads it: `Ctrl+Shift+8` (or `⌘+Shift+8`). */
export function keys(binding: string): string {
  return binding
    .split('-')
    .map((part) => (part === 'Mod' ? MOD : part.length === 1 ? part.toUpperCase() : part))
    .join('+')
}

/** `Bold` and `Mod-b` as a title: `Bold (Ctrl+B)`. */
export const titled = (name: string, binding?: string) => (binding ? `${name} (${keys(binding)})` : name)

type Group = { name: string; items: Array<[what: string, binding: string]> }

/** Every shortcut the page offers, grouped as the dialog shows them. */
export const SHORTCUTS: Group[] = [
  {
    name: 'Text',
    items: [
      ['Bold', 'Mod-b'],
      ['Italic', 'Mod-i'],
      ['Underline', 'Mod-u'],
      ['Strikethrough', 'Mod-Shift-s'],
      ['Code', 'Mod-e'],
      ['Highlight', 'Mod-Shift-h'],
      ['Subscript', 'Mod-,'],
      ['Superscript', 'Mod-.'],
      ['Add or edit a link', 'Mod-k'],
      ['Line break in the paragraph', 'Shift-Enter'],
    ],
  },
  {
    name: 'Blocks',
    items: [
      ['Heading 2, 3, 4 (1 is the title)', 'Mod-Alt-2'],
      ['Bullet list', 'Mod-Shift-8'],
      ['Numbered list', 'Mod-Shift-7'],
      ['Task list', 'Mod-Shift-9'],
      ['Quote', 'Mod-Shift-b'],
      ['Code block', 'Mod-Alt-c'],
      ['Indent / outdent a list item', 'Tab'],
    ],
  },
  {
    name: 'Tables',
    items: [
      ['Next cell (a new row after the last)', 'Tab'],
      ['Previous cell', 'Shift-Tab'],
    ],
  },
  {
    name: 'Editing',
    items: [
      ['Undo your last change', 'Mod-z'],
      ['Redo', 'Mod-Shift-z'],
      ['These shortcuts', 'Mod-/'],
    ],
  },
]

/** Typed at a line's start, Markdown becomes the block (TipTap's input rules). */
const MARKDOWN_RULES: Array<[string, string]> = [
  ['## ', 'Heading 2 (### for 3, …)'],
  ['- or * ', 'Bullet list'],
  ['1. ', 'Numbered list'],
  ['[ ] ', 'Task list'],
  ['> ', 'Quote'],
  ['``` ', 'Code block'],
  ['---', 'Horizontal line'],
]

let open: HTMLDialogElement | null = null

/** Opens the shortcuts dialog (once; a second call while it is open does nothing). Escape closes it. */
export function shortcutsDialog(onClose?: () => void): void {
  if (open) return
  const close = h('button', { type: 'submit' }, 'Close')
  const table = (caption: string, rows: Array<[string, string]>) =>
    h(
      'table',
      { class: 'shortcuts' },
      h('caption', {}, caption),
      h(
        'tbody',
        {},
        ...rows.map(([what, key]) => h('tr', {}, h('td', {}, what), h('td', {}, h('kbd', {}, key)))),
      ),
    )
  const dialog = h(
    'dialog',
    { class: 'shortcuts-dialog', 'aria-labelledby': 'shortcuts-heading', 'data-testid': 'shortcuts' },
    // Close first, beside the heading: focused on opening without scrolling the list out of view.
    h(
      'form',
      { method: 'dialog', class: 'dialog-head' },
      h('h2', { id: 'shortcuts-heading' }, 'Keyboard shortcuts'),
      close,
    ),
    h(
      'div',
      { class: 'shortcut-groups' },
      ...SHORTCUTS.map((group) =>
        table(
          group.name,
          group.items.map(([what, binding]) => [what, keys(binding)]),
        ),
      ),
      table(
        'Markdown at a line’s start',
        MARKDOWN_RULES.map(([typed, what]) => [what, typed]),
      ),
    ),
  )
  dialog.addEventListener('close', () => {
    dialog.remove()
    open = null
    onClose?.()
  })
  document.body.append(dialog)
  open = dialog
  dialog.showModal()
  close.focus()
}

/**
 * The page-wide keys of the help: Ctrl/⌘+/ anywhere, `?` where it would not be typed (outside the text and
 * form fields). Returns a function that removes the listener.
 */
export function listenForShortcutsKey(onClose?: () => void): () => void {
  const onKey = (event: KeyboardEvent) => {
    const mod = event.ctrlKey || event.metaKey
    const target = event.target as HTMLElement | null
    const typing =
      !!target &&
      (target.isContentEditable ||
        /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName) ||
        !!target.closest('dialog'))
    if ((mod && event.key === '/') || (!mod && !event.altKey && event.key === '?' && !typing)) {
      event.preventDefault()
      shortcutsDialog(onClose)
    }
  }
  document.addEventListener('keydown', onKey)
  return () => document.removeEventListener('keydown', onKey)
}
