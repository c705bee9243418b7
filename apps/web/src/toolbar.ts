/**
 * The formatting bar above the text: the marks and blocks of the project's schema, each a button with its
 * keyboard shortcut in the title, pressed while the selection has it. Hidden when the editor is read-only.
 */
import type { Editor } from '@tiptap/core'
import { h } from './dom.ts'

type Action = {
  label: string
  title: string
  run: (editor: Editor) => boolean
  active?: (editor: Editor) => boolean
}

const ACTIONS: Array<Action | '|'> = [
  {
    label: 'B',
    title: 'Bold (Ctrl+B)',
    run: (e) => e.chain().focus().toggleBold().run(),
    active: (e) => e.isActive('bold'),
  },
  {
    label: 'I',
    title: 'Italic (Ctrl+I)',
    run: (e) => e.chain().focus().toggleItalic().run(),
    active: (e) => e.isActive('italic'),
  },
  {
    label: 'S',
    title: 'Strikethrough (Ctrl+Shift+S)',
    run: (e) => e.chain().focus().toggleStrike().run(),
    active: (e) => e.isActive('strike'),
  },
  {
    label: '</>',
    title: 'Code (Ctrl+E)',
    run: (e) => e.chain().focus().toggleCode().run(),
    active: (e) => e.isActive('code'),
  },
  { label: 'Link', title: 'Link', run: (e) => toggleLink(e), active: (e) => e.isActive('link') },
  '|',
  {
    label: 'H2',
    title: 'Heading 2 (Ctrl+Alt+2)',
    run: (e) => e.chain().focus().toggleHeading({ level: 2 }).run(),
    active: (e) => e.isActive('heading', { level: 2 }),
  },
  {
    label: 'H3',
    title: 'Heading 3 (Ctrl+Alt+3)',
    run: (e) => e.chain().focus().toggleHeading({ level: 3 }).run(),
    active: (e) => e.isActive('heading', { level: 3 }),
  },
  {
    label: '• List',
    title: 'Bullet list (Ctrl+Shift+8)',
    run: (e) => e.chain().focus().toggleBulletList().run(),
    active: (e) => e.isActive('bulletList'),
  },
  {
    label: '1. List',
    title: 'Numbered list (Ctrl+Shift+7)',
    run: (e) => e.chain().focus().toggleOrderedList().run(),
    active: (e) => e.isActive('orderedList'),
  },
  {
    label: '☐ Tasks',
    title: 'Task list (Ctrl+Shift+9)',
    run: (e) => e.chain().focus().toggleTaskList().run(),
    active: (e) => e.isActive('taskList'),
  },
  {
    label: '❝',
    title: 'Quote (Ctrl+Shift+B)',
    run: (e) => e.chain().focus().toggleBlockquote().run(),
    active: (e) => e.isActive('blockquote'),
  },
  {
    label: '{ }',
    title: 'Code block (Ctrl+Alt+C)',
    run: (e) => e.chain().focus().toggleCodeBlock().run(),
    active: (e) => e.isActive('codeBlock'),
  },
  '|',
  { label: '↶', title: 'Undo your last change (Ctrl+Z)', run: (e) => e.chain().focus().undo().run() },
  { label: '↷', title: 'Redo (Ctrl+Shift+Z)', run: (e) => e.chain().focus().redo().run() },
]

function toggleLink(editor: Editor): boolean {
  if (editor.isActive('link')) return editor.chain().focus().unsetLink().run()
  const href = prompt('Link to (https://…)')?.trim()
  if (!href) return false
  return editor.chain().focus().extendMarkRange('link').setLink({ href }).run()
}

export function toolbar(editor: Editor): HTMLElement {
  const buttons: Array<[HTMLButtonElement, Action]> = []
  const bar = h('div', { class: 'toolbar', role: 'toolbar', 'aria-label': 'Formatting' })
  for (const action of ACTIONS) {
    if (action === '|') {
      bar.append(h('span', { class: 'sep', 'aria-hidden': 'true' }))
      continue
    }
    const button = h(
      'button',
      { type: 'button', title: action.title, 'aria-label': action.title },
      action.label,
    )
    // mousedown, not click: the editor keeps its selection (a click would blur it first).
    button.addEventListener('mousedown', (event) => {
      event.preventDefault()
      action.run(editor)
    })
    buttons.push([button, action])
    bar.append(button)
  }
  const refresh = () => {
    bar.hidden = !editor.isEditable
    for (const [button, action] of buttons)
      button.setAttribute('aria-pressed', String(action.active?.(editor) ?? false))
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
