/** The owner's sharing dialog: people as viewers or editors, public or private, locked (read-only). */
import { api, type DocumentInfo, slugPath } from './api.ts'
import { clear, h } from './dom.ts'

type Member = { handle: string; role: 'viewer' | 'editor' }

export function shareDialog(
  slug: string,
  info: DocumentInfo,
  changed: (next: Partial<DocumentInfo>) => void,
): void {
  const dialog = h('dialog', { class: 'share', 'aria-label': 'Share' })
  const list = h('ul', { class: 'members' })
  const problem = h('p', { class: 'error', role: 'alert', hidden: true })
  const fail = (error: unknown) => {
    problem.hidden = false
    problem.textContent = error instanceof Error ? error.message : String(error)
  }

  async function loadMembers() {
    try {
      const { members } = await api<{ members: Member[] }>(`${slugPath(slug)}/members`)
      clear(
        list,
        ...(members.length
          ? members.map((m) =>
              h(
                'li',
                {},
                `${m.handle} (${m.role}) `,
                h('button', { type: 'button', onclick: () => remove(m.handle) }, 'Remove'),
              ),
            )
          : [h('li', { class: 'note' }, 'Only you can open it (and everyone signed in when it is public).')]),
      )
    } catch (error) {
      fail(error)
    }
  }

  async function remove(handle: string) {
    try {
      await api(`${slugPath(slug)}/members/${encodeURIComponent(handle)}`, { method: 'DELETE' })
      await loadMembers()
    } catch (error) {
      fail(error)
    }
  }

  const handle = h('input', {
    type: 'text',
    name: 'handle',
    placeholder: 'handle',
    required: true,
    'aria-label': 'Handle',
  })
  const role = h(
    'select',
    { name: 'role', 'aria-label': 'Role' },
    h('option', { value: 'editor' }, 'editor'),
    h('option', { value: 'viewer' }, 'viewer'),
  )
  const add = h(
    'form',
    {
      class: 'inline',
      onsubmit: async (event: Event) => {
        event.preventDefault()
        problem.hidden = true
        try {
          await api(`${slugPath(slug)}/members/${encodeURIComponent(handle.value.trim())}`, {
            method: 'PUT',
            json: { role: role.value },
          })
          handle.value = ''
          await loadMembers()
        } catch (error) {
          fail(error)
        }
      },
    },
    handle,
    role,
    h('button', { type: 'submit' }, 'Share'),
  )

  const flag = (label: string, key: 'private' | 'readOnly', checkedWhen: boolean) => {
    const box = h('input', { type: 'checkbox', checked: checkedWhen })
    box.addEventListener('change', async () => {
      problem.hidden = true
      try {
        const value = key === 'private' ? !box.checked : box.checked
        const next = await api<DocumentInfo>(slugPath(slug), { method: 'PATCH', json: { [key]: value } })
        changed({ private: next.private, readOnly: next.readOnly })
      } catch (error) {
        box.checked = !box.checked
        fail(error)
      }
    })
    return h('label', { class: 'check' }, box, ` ${label}`)
  }

  clear(
    dialog,
    h('h2', {}, 'Share'),
    list,
    add,
    flag('Public: everyone signed in may read it', 'private', !info.private),
    flag('Locked: read-only for editors (you can still edit)', 'readOnly', info.readOnly),
    problem,
    h('form', { method: 'dialog' }, h('button', { type: 'submit' }, 'Done')),
  )
  dialog.addEventListener('close', () => dialog.remove())
  document.body.append(dialog)
  dialog.showModal()
  void loadMembers()
}
