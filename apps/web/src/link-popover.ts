/**
 * Links edited in the page (the toolbar's Link button, Ctrl/⌘+K): a small dialog beside the selection to
 * add a link, change its address, open it in a new tab or remove it. The address must be one a reader can
 * follow safely: `http:`, `https:` or `mailto:` (a bare `example.com` becomes `https://example.com`), at most
 * the schema's attribute length (`MAX_ATTRIBUTE_CHARS`, what the server's editor boundary accepts).
 */
import { MAX_ATTRIBUTE_CHARS } from '@collab/doc-schema/editor'
import type { Editor } from '@tiptap/core'
import { h } from './dom.ts'

/** The schemes a link may use: those a reader's browser opens as a page or a mail, never a script. */
export const LINK_SCHEMES = ['http:', 'https:', 'mailto:'] as const

/** A link's address as typed, checked: the href to store, or what is wrong and what to type instead. */
export function checkLinkAddress(raw: string): { href: string } | { problem: string } {
  let text = raw.trim()
  if (!text) return { problem: 'Type an address, such as https://example.com or mailto:name@example.com.' }
  if (/\s/.test(text)) return { problem: 'An address has no spaces: write %20 where a space belongs.' }
  // A bare host name or e-mail address, as people paste them: the scheme they mean.
  if (!/^[a-z][a-z0-9+.-]*:/i.test(text))
    text = /^[^@/]+@[^@/]+\.[^@/]+$/.test(text) ? `mailto:${text}` : `https://${text}`
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return { problem: `"${text.slice(0, 80)}" is not an address: write it as https://example.com/page.` }
  }
  if (!(LINK_SCHEMES as readonly string[]).includes(url.protocol))
    return {
      problem: `Links may use http, https or mailto, not "${url.protocol.slice(0, 20)}": a reader's browser would run or fetch anything else.`,
    }
  if (url.protocol !== 'mailto:' && !url.hostname)
    return { problem: 'This address names no site: write it as https://example.com/page.' }
  if (url.protocol === 'mailto:' && text.length <= 'mailto:'.length)
    return { problem: 'Write the e-mail address after mailto:, such as mailto:name@example.com.' }
  if (text.length > MAX_ATTRIBUTE_CHARS)
    return { problem: `This address is longer than ${MAX_ATTRIBUTE_CHARS} characters: link a shorter one.` }
  return { href: text }
}

let open: HTMLDialogElement | null = null

/** Opens the link dialog for the editor's selection (the link around the cursor, if any). */
export function linkPopover(editor: Editor): void {
  if (!editor.isEditable || open) return
  const wasLink = editor.isActive('link')
  if (wasLink) editor.chain().extendMarkRange('link').run()
  const { from, to, empty } = editor.state.selection
  const current = wasLink ? String(editor.getAttributes('link').href ?? '') : ''

  const problem = h('p', { class: 'error', id: 'link-problem', role: 'alert', hidden: true })
  const address = h('input', {
    type: 'text',
    class: 'field',
    id: 'link-address',
    name: 'href',
    inputmode: 'url',
    autocomplete: 'url',
    spellcheck: 'false',
    placeholder: 'https://…',
    'aria-describedby': 'link-problem',
    maxlength: String(MAX_ATTRIBUTE_CHARS),
  })
  address.value = current
  // With nothing selected and no link here, the text to show is asked for too (the address by default).
  const label =
    empty && !wasLink ? h('input', { type: 'text', class: 'field', id: 'link-text', name: 'text' }) : null
  const save = h('button', { type: 'submit', class: 'primary' }, wasLink ? 'Save' : 'Add link')
  const cancel = h('button', { type: 'button', onclick: () => dialog.close() }, 'Cancel')
  const checkedCurrent = current ? checkLinkAddress(current) : null
  const openLink =
    checkedCurrent && 'href' in checkedCurrent
      ? h(
          'a',
          { class: 'button', href: checkedCurrent.href, target: '_blank', rel: 'noopener noreferrer' },
          'Open ↗',
        )
      : null
  const remove = wasLink
    ? h(
        'button',
        {
          type: 'button',
          class: 'danger',
          onclick: () => {
            // The caret goes after the text that was linked: left selected, the next keystroke would
            // replace the words the person only meant to unlink.
            editor.chain().focus().setTextSelection({ from, to }).unsetLink().setTextSelection(to).run()
            dialog.close()
          },
        },
        'Remove link',
      )
    : null

  const form = h(
    'form',
    { method: 'dialog' },
    h('label', { for: 'link-address', class: 'field-label' }, 'Address (http, https or mailto)'),
    address,
    label ? h('label', { for: 'link-text', class: 'field-label' }, 'Text to show') : null,
    label,
    problem,
    h('div', { class: 'inline' }, save, openLink, remove, cancel),
  )
  form.addEventListener('submit', (event) => {
    event.preventDefault()
    const checked = checkLinkAddress(address.value)
    if ('problem' in checked) {
      problem.hidden = false
      problem.textContent = checked.problem
      address.setAttribute('aria-invalid', 'true')
      address.focus()
      return
    }
    const chain = editor.chain().focus().setTextSelection({ from, to })
    if (label) {
      const text = label.value.trim() || checked.href
      chain
        .insertContent({ type: 'text', text, marks: [{ type: 'link', attrs: { href: checked.href } }] })
        // Typing after the new link continues as plain text.
        .unsetMark('link')
        .run()
    } else {
      chain.extendMarkRange('link').setLink({ href: checked.href }).run()
    }
    dialog.close()
  })

  const dialog = h(
    'dialog',
    { class: 'link-popover', 'aria-labelledby': 'link-heading', 'data-testid': 'link-popover' },
    h('h2', { id: 'link-heading' }, wasLink ? 'Edit link' : 'Add a link'),
    form,
  )
  dialog.addEventListener('close', () => {
    dialog.remove()
    open = null
    // Back to the text, the selection as it was (Escape and Cancel included).
    if (!editor.isDestroyed) editor.commands.focus()
  })
  document.body.append(dialog)
  open = dialog
  place(dialog, editor, from)
  dialog.showModal()
  address.focus()
  address.select()
}

/** Beside the selection when there is room (below its line), else where the dialog stylesheet puts it. */
function place(dialog: HTMLDialogElement, editor: Editor, pos: number): void {
  if (window.innerWidth < 600) return // a phone: centred, full width (style.css)
  try {
    const at = editor.view.coordsAtPos(pos)
    const left = Math.max(8, Math.min(at.left, window.innerWidth - 380))
    const top = Math.min(at.bottom + 8, window.innerHeight - 260)
    dialog.style.margin = '0'
    dialog.style.inset = 'auto'
    dialog.style.left = `${left}px`
    dialog.style.top = `${Math.max(8, top)}px`
  } catch {
    // No coordinates (the position is not drawn): the centred default.
  }
}
