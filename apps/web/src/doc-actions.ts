/**
 * A document's own controls in the editor's header: rename (a writer sets the first heading, which is
 * the title), duplicate (anyone who may read it gets a copy of their own) and delete (its owner only,
 * after a dialog that names it).
 */
import { ApiError, api, type DocumentInfo, slugPath } from './api.ts'
import { confirmDialog } from './confirm-dialog.ts'
import { h } from './dom.ts'

/** What the list page says after a deletion: `/?deleted=<title>`. */
export const DELETED_PARAM = 'deleted'

/** The title a copy gets. */
export const copyTitle = (title: string) => `${title} (copy)`

function failure(error: unknown): string {
  return error instanceof ApiError ? error.message : String(error)
}

/** Copies the document (its Markdown export, imported again) as the person's own, then opens the copy. */
export async function duplicate(slug: string, info: DocumentInfo, fail: (text: string) => void) {
  try {
    const response = await fetch(`/api${slugPath(slug)}/markdown`, { credentials: 'same-origin' })
    if (!response.ok) throw new Error(`export: ${response.status} ${response.statusText}`)
    const markdown = await response.text()
    // The export starts with the title as `# …`: the copy gets its own title instead.
    const body = markdown.replace(/^# [^\n]*\n?/, '')
    const copy = await api<DocumentInfo>('/documents', {
      method: 'POST',
      json: { title: copyTitle(info.title), markdown: body, private: true },
    })
    location.assign(`/d/${encodeURIComponent(copy.slug)}`)
  } catch (error) {
    fail(`Could not duplicate: ${failure(error)}`)
  }
}

/** The owner's "Delete" dialog: it names the document; Cancel (or Escape) leaves it, Delete removes it. */
export function deleteDialog(slug: string, info: DocumentInfo): void {
  confirmDialog({
    id: 'delete-heading',
    title: `Delete "${info.title}"?`,
    body: [
      h('p', {}, 'It goes for everyone it is shared with, agents included, and its link stops working.'),
    ],
    act: 'Delete',
    run: async () => {
      await api(slugPath(slug), { method: 'DELETE' })
      location.assign(`/?${DELETED_PARAM}=${encodeURIComponent(info.title)}`)
    },
  })
}

/**
 * The "Rename" dialog of a person who may write: a labelled title field; Save sets the document's first
 * heading (its title) to it in the live document, so everyone sees it and the list follows once stored.
 * `apply` answers an error to show, or null when done.
 */
export function renameDialog(title: string, apply: (title: string) => string | null): void {
  const problem = h('p', { class: 'error', role: 'alert', hidden: true })
  const field = h('input', {
    type: 'text',
    id: 'rename-title',
    name: 'title',
    required: true,
    maxlength: '200',
  })
  field.value = title
  const dialog = h(
    'dialog',
    { class: 'share confirm', 'aria-labelledby': 'rename-heading' },
    h('h2', { id: 'rename-heading' }, 'Rename'),
    h(
      'form',
      {
        onsubmit: (event: Event) => {
          event.preventDefault()
          const next = field.value.replace(/\s+/g, ' ').trim()
          const error = next ? apply(next) : 'title: must not be empty'
          if (error) {
            problem.hidden = false
            problem.textContent = error
          } else dialog.close()
        },
      },
      h('label', { for: 'rename-title' }, 'Title (the first line of the document)'),
      ' ',
      field,
      problem,
      h(
        'p',
        { class: 'inline' },
        h('button', { type: 'button', onclick: () => dialog.close() }, 'Cancel'),
        h('button', { type: 'submit' }, 'Save'),
      ),
    ),
  )
  dialog.addEventListener('close', () => dialog.remove())
  document.body.append(dialog)
  dialog.showModal()
  field.select()
}
