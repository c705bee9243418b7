/**
 * The chat of the heading above the cursor: the same rooms agents read and post in, the latest messages
 * and "Show older messages" for the ones before, loaded again when the server says someone posted.
 */
import { api, type ChatMessage, slugPath } from './api.ts'
import { clear, h, when } from './dom.ts'
import type { Heading } from './outline.ts'

type ChatPage = { messages: ChatMessage[]; hasOlder: boolean }

export type ChatPanel = {
  /** The id of the heading whose room is shown, or null. */
  readonly section: string | null
  /** Shows the room of `heading` (none when undefined); true when that changed the room. */
  follow(heading: Heading | undefined): boolean
  /** Sets the title (the heading's text, as it is edited). */
  showTitle(text: string): void
  /** A stateless message from the server: a post in the room shown loads its messages again. */
  notified(payload: string): void
  /** Shows the box to post in, or says why there is none (write access removed while open). */
  setCanWrite(canWrite: boolean): void
}

/** Fills `element` with the chat of document `slug`; posting only when `canWrite`. */
export function chatPanel(element: HTMLElement, slug: string, canWrite: boolean): ChatPanel {
  let section: string | null = null
  const title = h('span')
  const messages = h('ol', { class: 'messages', 'aria-label': 'Messages' })
  const input = h('textarea', {
    name: 'text',
    rows: '2',
    maxlength: '2000',
    placeholder: 'Message this section',
    'aria-label': 'Message',
  })
  const error = h('p', { class: 'error', role: 'alert', hidden: true })
  const showError = (cause: unknown) => {
    error.hidden = false
    error.textContent = cause instanceof Error ? cause.message : String(cause)
  }
  const form = h(
    'form',
    {
      onsubmit: async (event: Event) => {
        event.preventDefault()
        if (!section || !input.value.trim()) return
        error.hidden = true
        try {
          await api(`${slugPath(slug)}/chat/${encodeURIComponent(section)}`, {
            method: 'POST',
            json: { text: input.value },
          })
          input.value = ''
          await load()
        } catch (cause) {
          showError(cause)
        }
      },
    },
    input,
    h('button', { type: 'submit' }, 'Send'),
  )
  const readOnlyNote = h('p', { class: 'note' }, 'Posting needs write access.')
  clear(element, h('h2', {}, 'Chat: ', title), messages, error, canWrite ? form : readOnlyNote)

  // An agent's message says so, and through which app: never a second message "by alice".
  const messageItem = (m: ChatMessage) =>
    h(
      'li',
      { class: m.app === null ? 'person' : 'agent' },
      // No colour of its own: a handle's hash would not be the colour the server gives the person present.
      h('b', {}, m.app === null ? m.author : `✦ ${m.author}'s agent`),
      m.app === null ? null : h('span', { class: 'badge', title: 'The app it posted through' }, m.app),
      ' ',
      h('time', { datetime: m.createdAt }, when(m.createdAt)),
      h('p', {}, m.text),
    )

  /** A "Show older" button before the messages, loading the page before `seq` when pressed. */
  function olderButton(room: string, seq: number): HTMLElement {
    const item = h('li', { class: 'note' })
    const button = h('button', { type: 'button' }, 'Show older messages')
    button.addEventListener('click', async () => {
      button.disabled = true
      try {
        const page = await api<ChatPage>(`${slugPath(slug)}/chat/${encodeURIComponent(room)}?before=${seq}`)
        if (room !== section) return
        const first = page.messages[0]
        item.replaceWith(
          ...(page.hasOlder && first ? [olderButton(room, first.seq)] : []),
          ...page.messages.map(messageItem),
        )
      } catch (cause) {
        button.disabled = false
        showError(cause)
      }
    })
    item.append(button)
    return item
  }

  async function load() {
    const room = section
    if (!room) return clear(messages)
    try {
      const page = await api<ChatPage>(`${slugPath(slug)}/chat/${encodeURIComponent(room)}`)
      if (room !== section) return
      const first = page.messages[0]
      clear(
        messages,
        page.hasOlder && first ? olderButton(room, first.seq) : null,
        ...(page.messages.length
          ? page.messages.map(messageItem)
          : [h('li', { class: 'note' }, 'No messages about this section yet.')]),
      )
      messages.lastElementChild?.scrollIntoView({ block: 'nearest' })
    } catch (cause) {
      showError(cause)
    }
  }

  return {
    get section() {
      return section
    },
    follow(heading) {
      const id = heading?.id ?? null
      if (id === section) return false
      section = id
      title.textContent = heading?.text || '(untitled)'
      void load()
      return true
    },
    showTitle(text) {
      title.textContent = text
    },
    notified(payload) {
      const message = parse(payload)
      if (message?.type === 'chat' && message.sectionId === section) void load()
    },
    setCanWrite(can) {
      if (can) readOnlyNote.replaceWith(form)
      else form.replaceWith(readOnlyNote)
    },
  }
}

function parse(payload: string): { type?: string; sectionId?: string } | null {
  try {
    return JSON.parse(payload) as { type?: string; sectionId?: string }
  } catch {
    return null
  }
}
