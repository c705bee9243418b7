/**
 * The page's one confirming dialog (delete a document, restore or undo a version): it names what it acts
 * on and says what happens; Cancel is focused first (Enter on an unread dialog does nothing harmful) and
 * Escape leaves it; the action's error (the server's refusal) is shown in it, the dialog kept open.
 */
import { ApiError } from './api.ts'
import { h } from './dom.ts'

/** The text of a failed call as people read it: the server's message, or the error's. */
export function failure(error: unknown): string {
  return error instanceof ApiError || error instanceof Error ? error.message : String(error)
}

export function confirmDialog(ask: {
  /** The id of its heading (what labels the dialog). */
  id: string
  title: string
  /** The paragraphs under the heading. */
  body: readonly HTMLElement[]
  /** The confirming button's text. */
  act: string
  /** Does the action; `close` closes the dialog. A throw shows its message and enables the button again. */
  run: (close: () => void) => Promise<void>
  /** After the dialog closed and left the page. */
  onClose?: () => void
}): void {
  const problem = h('p', { class: 'error', role: 'alert', hidden: true })
  const cancel = h('button', { type: 'submit', value: 'cancel' }, 'Cancel')
  const confirm = h(
    'button',
    {
      type: 'button',
      class: 'danger',
      onclick: async () => {
        problem.hidden = true
        confirm.disabled = true
        try {
          await ask.run(() => dialog.close())
        } catch (error) {
          confirm.disabled = false
          problem.hidden = false
          problem.textContent = failure(error)
        }
      },
    },
    ask.act,
  )
  const dialog = h(
    'dialog',
    { class: 'share confirm', 'aria-labelledby': ask.id },
    h('h2', { id: ask.id }, ask.title),
    ...ask.body,
    problem,
    h('form', { method: 'dialog', class: 'inline' }, cancel, confirm),
  )
  dialog.addEventListener('close', () => {
    dialog.remove()
    ask.onClose?.()
  })
  document.body.append(dialog)
  dialog.showModal()
  cancel.focus()
}
