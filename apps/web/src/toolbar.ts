/**
 * The formatting bar above the text: the marks and blocks of the project's schema, each a button whose title
 * and accessible name give its keyboard shortcut (shortcuts.ts), pressed while the selection has it; a table
 * (inserted 3 × 3 with a header row, and while the cursor is in one, its rows, columns, header row and the
 * table itself added or removed, TipTap's own table commands); links edited in the page (link-popover.ts,
 * also Ctrl/⌘+K); and `?`, the list of shortcuts. Hidden when the editor is read-only.
 */
import type { Editor } from '@tiptap/core'
import { keymap } from '@tiptap/pm/keymap'
import { h } from './dom.ts'
import { linkPopover } from './link-popover.ts'
import { listenForShortcutsKey, shortcutsDialog, titled } from './shortcuts.ts'

type Action = {
  label: string
  title: string
  run: (editor: Editor) => boolean
  active?: (editor: Editor) => boolean
  /** When false the button is disabled (e.g. a table inside a table). */
  enabled?: (editor: Editor) => boolean
}

/** The size of a new table: small enough to see whole, grown with Tab or the table buttons. */
export const NEW_TABLE = { rows: 3, cols: 3, withHeaderRow: true } as const

const ACTIONS: Array<Action | '|'> = [
  {
    label: 'B',
    title: titled('Bold', 'Mod-b'),
    run: (e) => e.chain().focus().toggleBold().run(),
    active: (e) => e.isActive('bold'),
  },
  {
    label: 'I',
    title: titled('Italic', 'Mod-i'),
    run: (e) => e.chain().focus().toggleItalic().run(),
    active: (e) => e.isActive('italic'),
  },
  {
    label: 'S',
    title: titled('Strikethrough', 'Mod-Shift-s'),
    run: (e) => e.chain().focus().toggleStrike().run(),
    active: (e) => e.isActive('strike'),
  },
  {
    label: '</>',
    title: titled('Code', 'Mod-e'),
    run: (e) => e.chain().focus().toggleCode().run(),
    active: (e) => e.isActive('code'),
  },
  {
    label: 'Link',
    title: titled('Link: add, edit or remove', 'Mod-k'),
    run: (e) => {
      linkPopover(e)
      return true
    },
    active: (e) => e.isActive('link'),
  },
  '|',
  {
    label: 'H2',
    title: titled('Heading 2', 'Mod-Alt-2'),
    run: (e) => e.chain().focus().toggleHeading({ level: 2 }).run(),
    active: (e) => e.isActive('heading', { level: 2 }),
  },
  {
    label: 'H3',
    title: titled('Heading 3', 'Mod-Alt-3'),
    run: (e) => e.chain().focus().toggleHeading({ level: 3 }).run(),
    active: (e) => e.isActive('heading', { level: 3 }),
  },
  {
    label: '• List',
    title: titled('Bullet list', 'Mod-Shift-8'),
    run: (e) => e.chain().focus().toggleBulletList().run(),
    active: (e) => e.isActive('bulletList'),
  },
  {
    label: '1. List',
    title: titled('Numbered list', 'Mod-Shift-7'),
    run: (e) => e.chain().focus().toggleOrderedList().run(),
    active: (e) => e.isActive('orderedList'),
  },
  {
    label: '☐ Tasks',
    title: titled('Task list', 'Mod-Shift-9'),
    run: (e) => e.chain().focus().toggleTaskList().run(),
    active: (e) => e.isActive('taskList'),
  },
  {
    label: '❝',
    title: titled('Quote', 'Mod-Shift-b'),
    run: (e) => e.chain().focus().toggleBlockquote().run(),
    active: (e) => e.isActive('blockquote'),
  },
  {
    label: '{ }',
    title: titled('Code block', 'Mod-Alt-c'),
    run: (e) => e.chain().focus().toggleCodeBlock().run(),
    active: (e) => e.isActive('codeBlock'),
  },
  {
    label: '⊞',
    title: 'Insert a table (3 × 3, a header row)',
    run: (e) => e.chain().focus().insertTable(NEW_TABLE).run(),
    // Not inside a table (Markdown has no nested tables) nor in the title (the first heading).
    enabled: (e) => !e.isActive('table') && !inTitle(e),
  },
  '|',
  {
    label: '↶',
    title: titled('Undo your last change', 'Mod-z'),
    run: (e) => e.chain().focus().undo().run(),
  },
  { label: '↷', title: titled('Redo', 'Mod-Shift-z'), run: (e) => e.chain().focus().redo().run() },
]

/** The table's own controls, shown while the cursor is in a table. */
const TABLE_ACTIONS: Action[] = [
  { label: '+ Row above', title: 'Add a row above', run: (e) => e.chain().focus().addRowBefore().run() },
  { label: '+ Row below', title: 'Add a row below', run: (e) => e.chain().focus().addRowAfter().run() },
  { label: '− Row', title: 'Delete this row', run: (e) => e.chain().focus().deleteRow().run() },
  {
    label: '+ Col left',
    title: 'Add a column to the left',
    run: (e) => e.chain().focus().addColumnBefore().run(),
  },
  {
    label: '+ Col right',
    title: 'Add a column to the right',
    run: (e) => e.chain().focus().addColumnAfter().run(),
  },
  { label: '− Col', title: 'Delete this column', run: (e) => e.chain().focus().deleteColumn().run() },
  {
    label: 'Header row',
    title: 'The first row is a header row (Markdown tables always have one)',
    run: (e) => e.chain().focus().toggleHeaderRow().run(),
    active: (e) => firstRowIsHeader(e),
  },
  {
    label: '✕ Table',
    title: 'Delete the table',
    run: (e) => e.chain().focus().deleteTable().run(),
  },
]

/** Whether the cursor is in the document's first block, its title (a table there would move the title). */
function inTitle(editor: Editor): boolean {
  const { $from } = editor.state.selection
  return $from.depth >= 1 && $from.index(0) === 0
}

/** Whether the first row of the table around the cursor is made of header cells. */
function firstRowIsHeader(editor: Editor): boolean {
  const { $from } = editor.state.selection
  for (let depth = $from.depth; depth > 0; depth--) {
    const node = $from.node(depth)
    if (node.type.name === 'table') {
      let header = true
      node.firstChild?.forEach((cell) => {
        if (cell.type.name !== 'tableHeader') header = false
      })
      return header
    }
  }
  return false
}

/** A button for an action: pressed by mouse without moving the editor's focus, and by keyboard too. */
function actionButton(editor: Editor, action: Action): HTMLButtonElement {
  const button = h(
    'button',
    { type: 'button', title: action.title, 'aria-label': action.title },
    action.label,
  )
  // mousedown, not click: the editor keeps its selection (a click would blur it first).
  button.addEventListener('mousedown', (event) => {
    event.preventDefault()
    if (!button.disabled) action.run(editor)
  })
  // Enter or Space on a focused button (a click with no pointer: detail 0).
  button.addEventListener('click', (event) => {
    if (event.detail === 0) action.run(editor)
  })
  return button
}

export function toolbar(editor: Editor): HTMLElement {
  const buttons: Array<[HTMLButtonElement, Action]> = []
  const bar = h('div', { class: 'toolbar', role: 'toolbar', 'aria-label': 'Formatting' })
  for (const action of ACTIONS) {
    if (action === '|') {
      bar.append(h('span', { class: 'sep', 'aria-hidden': 'true' }))
      continue
    }
    const button = actionButton(editor, action)
    buttons.push([button, action])
    bar.append(button)
  }
  const help = h(
    'button',
    {
      type: 'button',
      class: 'help',
      title: titled('Keyboard shortcuts', 'Mod-/'),
      'aria-label': titled('Keyboard shortcuts', 'Mod-/'),
      onclick: () => shortcutsDialog(() => editor.commands.focus()),
    },
    '?',
  )
  bar.append(help)
  const tableGroup = h('div', {
    class: 'table-tools',
    role: 'group',
    'aria-label': 'Table',
    'data-testid': 'table-tools',
    hidden: true,
  })
  for (const action of TABLE_ACTIONS) {
    const button = actionButton(editor, action)
    buttons.push([button, action])
    tableGroup.append(button)
  }
  bar.append(tableGroup)

  // Ctrl/⌘+K in the text: the link dialog (before the browser's own use of the key).
  editor.registerPlugin(
    keymap({
      'Mod-k': () => {
        linkPopover(editor)
        return true
      },
    }),
  )
  // Ctrl/⌘+/ and `?` (outside the text): the list of shortcuts, then back to the text.
  const stopListening = listenForShortcutsKey(() => {
    if (editor.isEditable) editor.commands.focus()
  })
  editor.on('destroy', stopListening)

  const refresh = () => {
    bar.hidden = !editor.isEditable
    tableGroup.hidden = !editor.isActive('table')
    for (const [button, action] of buttons) {
      if (action.active) button.setAttribute('aria-pressed', String(action.active(editor)))
      if (action.enabled) button.disabled = !action.enabled(editor)
    }
  }
  editor.on('selectionUpdate', refresh)
  editor.on('transaction', ({ transaction }) => {
    if (transaction.docChanged || transaction.selectionSet || transaction.storedMarksSet) refresh()
  })
  // setEditable emits an update; the bar follows read-only changes (access removed while open).
  editor.on('update', refresh)
  refresh()
  return bar
}
