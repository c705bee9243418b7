/**
 * `/d/<slug>`: one document in TipTap with the project's schema, bound to the live Yjs document through
 * the Hocuspocus provider (signed in by the browser's cookie), with the others present (their names and
 * coloured carets; agents marked as agents while their edits land), the outline beside it, the chat room
 * of the heading being read, export, and the owner's sharing controls.
 */
import {
  ALL_EDITOR_TYPES,
  EDITOR_TYPES_PARAM,
  extensions,
  FRAGMENT_NAME,
  HEADING_ID_ATTR,
} from '@collab/doc-schema/editor'
import { HocuspocusProvider } from '@hocuspocus/provider'
import { Editor } from '@tiptap/core'
import Collaboration from '@tiptap/extension-collaboration'
import CollaborationCaret from '@tiptap/extension-collaboration-caret'
import * as Y from 'yjs'
import { ApiError, api, type ChatMessage, type DocumentInfo, slugPath } from './api.ts'
import type { Boot } from './boot.ts'
import { clear, colorOf, h, when } from './dom.ts'
import { header } from './header.ts'
import { type PresentUser, presentUser } from './presence.ts'
import { shareDialog } from './share.ts'
import { toolbar } from './toolbar.ts'

/** This editor knows the project's whole schema, and says so (docs/server.md, Editor input). */
const DECLARED_TYPES = `${EDITOR_TYPES_PARAM}=${encodeURIComponent(ALL_EDITOR_TYPES)}`

type Heading = { id: string | null; level: number; text: string; pos: number }

export async function editorView(root: HTMLElement, boot: Boot, slug: string): Promise<void> {
  let info: DocumentInfo
  try {
    info = await api<DocumentInfo>(slugPath(slug))
  } catch (error) {
    clear(
      root,
      header(boot),
      h(
        'main',
        { class: 'list' },
        h(
          'p',
          { class: 'error', role: 'alert' },
          error instanceof ApiError && error.status === 404
            ? `No document "${slug}", or you may not read it.`
            : String(error),
        ),
      ),
    )
    return
  }
  document.title = info.title

  const status = h('span', { class: 'status', role: 'status', 'data-testid': 'status' }, 'Connecting…')
  const presence = h('ul', { class: 'presence', 'aria-label': 'Present' })
  const banner = h('p', { class: 'banner', role: 'alert', hidden: true })
  const outline = h('ol', { class: 'outline', 'aria-label': 'Outline' })
  const chat = h('section', { class: 'chat', 'aria-label': 'Chat' })
  const mount = h('div', { class: 'editor', 'data-testid': 'editor' })
  const exportLink = h(
    'a',
    { href: `/api${slugPath(slug)}/markdown`, download: `${slug}.md`, class: 'button' },
    'Export Markdown',
  )
  const shareButton =
    info.whose === 'yours'
      ? h(
          'button',
          { type: 'button', onclick: () => shareDialog(slug, info, (next) => Object.assign(info, next)) },
          'Share',
        )
      : null
  const access = h('span', { class: 'access' }, accessText(info))

  clear(
    root,
    header(
      boot,
      h('span', { class: 'doc-title' }, info.title),
      access,
      status,
      presence,
      exportLink,
      shareButton ?? '',
    ),
    banner,
    h(
      'div',
      { class: 'workspace' },
      h('nav', { class: 'side' }, h('h2', {}, 'Outline'), outline),
      h('main', { class: 'page' }, mount),
      chat,
    ),
  )

  if (new URLSearchParams(location.search).get('imported')) {
    showBanner(
      'Imported. Some Markdown had no exact equivalent and was adapted (see the import notes in the docs).',
      'info',
    )
  }

  function showBanner(text: string, kind: 'error' | 'info' = 'error') {
    banner.hidden = false
    banner.className = `banner ${kind}`
    banner.textContent = text
  }

  // What this page says of itself; the server replaces the name (and any colour not #rrggbb) with its own.
  const me = { name: boot.name ?? boot.handle, color: colorOf(boot.handle) }
  const ydoc = new Y.Doc()
  const socketUrl = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/?${DECLARED_TYPES}`
  let editor: Editor | undefined
  let scope: 'read-write' | 'readonly' = info.canWrite ? 'read-write' : 'readonly'

  let connected = false
  const provider = new HocuspocusProvider({
    url: socketUrl,
    name: info.room,
    document: ydoc,
    // The socket signs in with this page's session cookie; the provider needs some token string.
    token: 'session',
    onAuthenticated: ({ scope: granted }) => {
      scope = granted === 'readonly' ? 'readonly' : 'read-write'
      editor?.setEditable(scope === 'read-write')
      access.textContent = accessText({ ...info, canWrite: scope === 'read-write' })
    },
    onAuthenticationFailed: () =>
      showBanner('This document could not be opened: it was deleted, or you may no longer read it.'),
    onClose: ({ event }) => {
      if (!event.reason) return // a dropped connection: the provider reconnects and resends
      editor?.setEditable(false)
      // The server's reasons are written for any client; a person gets what to do next.
      if (/token revoked or expired/i.test(event.reason)) {
        showBanner('You were signed out (here or in another tab). Sign in again to keep editing.')
        banner.append(
          ' ',
          h('a', { href: `/sign-in?next=${encodeURIComponent(location.pathname)}` }, 'Sign in'),
        )
      } else if (/no access to this document/i.test(event.reason)) {
        showBanner('You no longer have access to this document: its owner changed who may open it.')
      } else {
        showBanner(`Disconnected: ${event.reason}. Reload the page to continue.`)
      }
    },
    onStatus: ({ status: state }) => {
      connected = state === 'connected'
      status.textContent =
        state === 'connected'
          ? 'Connected'
          : state === 'connecting'
            ? 'Connecting…'
            : 'Offline: your changes are kept and sent when back'
    },
    onUnsyncedChanges: ({ number }) => {
      if (connected) status.textContent = number > 0 ? 'Sending…' : 'Connected'
    },
    onStateless: ({ payload }) => {
      const message = parse(payload)
      if (message?.type === 'chat' && message.sectionId === chatSection) void loadChat()
    },
    onSynced: () => {
      // Marks for the benchmarks' first-paint breakdown (performance.getEntriesByType('mark')).
      performance.mark('collab:synced')
      if (!editor) createEditor()
      performance.mark('collab:editor')
    },
  })

  function createEditor() {
    // Made only once the document has synced: an editor bound to an empty document would add its own
    // empty title heading, which would then sit beside the real one.
    editor = new Editor({
      element: mount,
      editable: scope === 'read-write',
      extensions: [
        ...extensions,
        Collaboration.configure({ fragment: ydoc.getXmlFragment(FRAGMENT_NAME) }),
        CollaborationCaret.configure({
          provider,
          user: me,
          render: (user: Record<string, unknown>) => caret(presentUser({ user })),
          selectionRender: (user: Record<string, unknown>) => {
            const shown = presentUser({ user })
            return shown
              ? { style: `background-color: ${shown.color}70`, class: 'ProseMirror-yjs-selection' }
              : {}
          },
        }),
      ],
      editorProps: { attributes: { class: 'prose', spellcheck: 'true', 'aria-label': info.title } },
    })
    mount.before(toolbar(editor))
    editor.on('update', renderOutline)
    editor.on('selectionUpdate', followSelection)
    renderOutline()
    followSelection()
  }

  // ---- Presence: who has the document open (people and agents) --------------------------------------

  function renderPresence() {
    const states = [...provider.awareness!.getStates().entries()]
    // Only what presentUser keeps of each state is drawn: text names, #rrggbb colours, the server's agent flag.
    const users = states
      .filter(([id]) => id !== ydoc.clientID)
      .map(([, state]) => presentUser(state))
      .filter((user): user is PresentUser => user !== null)
    clear(
      presence,
      h('li', { style: `--c:${me.color}`, title: 'You' }, `${me.name} (you)`),
      ...users.map((user) =>
        h(
          'li',
          {
            style: `--c:${user.color}`,
            class: user.agent ? 'agent' : '',
            'data-agent': user.agent ? 'true' : undefined,
            title: user.name,
          },
          user.agent ? `✦ ${user.name}` : user.name,
        ),
      ),
    )
  }
  provider.awareness?.on('change', renderPresence)
  renderPresence()

  // ---- Outline ----------------------------------------------------------------------------------------

  function headings(): Heading[] {
    const out: Heading[] = []
    editor?.state.doc.forEach((node, offset) => {
      if (node.type.name === 'heading') {
        out.push({
          id: (node.attrs[HEADING_ID_ATTR] as string | null) ?? null,
          level: node.attrs.level as number,
          text: node.textContent,
          pos: offset,
        })
      }
    })
    return out
  }

  // The outline is rebuilt only when the headings changed (typing in a paragraph leaves it alone), at
  // most every 200 ms, and its links share one listener: on a large document the list has thousands.
  let outlineTimer: ReturnType<typeof setTimeout> | undefined
  let shown: Heading[] = []
  let shownKey = ''
  function renderOutline() {
    if (outlineTimer) return
    outlineTimer = setTimeout(() => {
      outlineTimer = undefined
      const list = headings()
      const key = list.map((heading) => `${heading.level} ${heading.id} ${heading.text}`).join('\n')
      shown = list
      if (key === shownKey) return markCurrent()
      shownKey = key
      clear(
        outline,
        ...list.map((heading, index) =>
          h(
            'li',
            { class: `level-${heading.level}` },
            h(
              'a',
              { href: heading.id ? `#${heading.id}` : '#', 'data-index': String(index) },
              heading.text || '(untitled)',
            ),
          ),
        ),
      )
      markCurrent()
    }, 200)
  }
  outline.addEventListener('click', (event) => {
    const link = (event.target as Element).closest('a[data-index]')
    if (!link) return
    event.preventDefault()
    const heading = shown[Number(link.getAttribute('data-index'))]
    if (heading) goTo(heading)
  })

  /** Marks the heading whose chat is shown, and keeps the chat's title equal to its text. */
  function markCurrent() {
    outline.querySelector('li.current')?.classList.remove('current')
    const index = shown.findIndex((heading) => heading.id === chatSection)
    if (index < 0) return
    outline.children[index]?.classList.add('current')
    chatTitle.textContent = shown[index]!.text || '(untitled)'
  }

  function goTo(heading: Heading) {
    if (!editor) return
    editor
      .chain()
      .focus()
      .setTextSelection(heading.pos + 1)
      .run()
    const dom = editor.view.nodeDOM(heading.pos)
    if (dom instanceof HTMLElement) dom.scrollIntoView({ block: 'start', behavior: 'smooth' })
  }

  // ---- Chat of the heading above the cursor ----------------------------------------------------------

  let chatSection: string | null = null
  const chatTitle = h('span')
  const messages = h('ol', { class: 'messages', 'aria-label': 'Messages' })
  const input = h('textarea', {
    name: 'text',
    rows: '2',
    maxlength: '2000',
    placeholder: 'Message this section',
    'aria-label': 'Message',
  })
  const chatError = h('p', { class: 'error', role: 'alert', hidden: true })
  const form = h(
    'form',
    {
      onsubmit: async (event: Event) => {
        event.preventDefault()
        if (!chatSection || !input.value.trim()) return
        chatError.hidden = true
        try {
          await api(`${slugPath(slug)}/chat/${encodeURIComponent(chatSection)}`, {
            method: 'POST',
            json: { text: input.value },
          })
          input.value = ''
          await loadChat()
        } catch (error) {
          chatError.hidden = false
          chatError.textContent = error instanceof Error ? error.message : String(error)
        }
      },
    },
    input,
    h('button', { type: 'submit' }, 'Send'),
  )
  clear(
    chat,
    h('h2', {}, 'Chat: ', chatTitle),
    messages,
    chatError,
    info.canWrite ? form : h('p', { class: 'note' }, 'Posting needs write access.'),
  )

  /** The heading above the cursor: a walk back from the cursor's block, not over the whole document. */
  function headingAboveCursor(): Heading | undefined {
    if (!editor) return undefined
    const doc = editor.state.doc
    let index = doc.resolve(editor.state.selection.from).index(0)
    let pos = 0
    for (let i = 0; i < index; i++) pos += doc.child(i).nodeSize
    for (; index >= 0; index--) {
      const node = doc.child(index)
      if (node.type.name === 'heading') {
        const id = (node.attrs[HEADING_ID_ATTR] as string | null) ?? null
        return { id, level: node.attrs.level as number, text: node.textContent, pos }
      }
      if (index > 0) pos -= doc.child(index - 1).nodeSize
    }
    return undefined
  }

  function followSelection() {
    const found = headingAboveCursor()
    const id = found?.id ?? null
    if (id === chatSection) return
    chatSection = id
    chatTitle.textContent = found?.text || '(untitled)'
    markCurrent()
    void loadChat()
  }

  type ChatPage = { messages: ChatMessage[]; hasOlder: boolean }
  const messageItem = (m: ChatMessage) =>
    h(
      'li',
      {},
      h('b', { style: `color:${colorOf(m.author)}` }, m.author),
      ' ',
      h('time', { datetime: m.createdAt }, when(m.createdAt)),
      h('p', {}, m.text),
    )

  /** A "Show older" button before the messages, loading the page before `seq` when pressed. */
  function olderButton(section: string, seq: number): HTMLElement {
    const item = h('li', { class: 'note' })
    const button = h('button', { type: 'button' }, 'Show older messages')
    button.addEventListener('click', async () => {
      button.disabled = true
      try {
        const page = await api<ChatPage>(
          `${slugPath(slug)}/chat/${encodeURIComponent(section)}?before=${seq}`,
        )
        if (section !== chatSection) return
        const first = page.messages[0]
        item.replaceWith(
          ...(page.hasOlder && first ? [olderButton(section, first.seq)] : []),
          ...page.messages.map(messageItem),
        )
      } catch (error) {
        button.disabled = false
        chatError.hidden = false
        chatError.textContent = error instanceof Error ? error.message : String(error)
      }
    })
    item.append(button)
    return item
  }

  async function loadChat() {
    const section = chatSection
    if (!section) return clear(messages)
    try {
      const page = await api<ChatPage>(`${slugPath(slug)}/chat/${encodeURIComponent(section)}`)
      if (section !== chatSection) return
      const first = page.messages[0]
      clear(
        messages,
        page.hasOlder && first ? olderButton(section, first.seq) : null,
        ...(page.messages.length
          ? page.messages.map(messageItem)
          : [h('li', { class: 'note' }, 'No messages about this section yet.')]),
      )
      messages.lastElementChild?.scrollIntoView({ block: 'nearest' })
    } catch (error) {
      chatError.hidden = false
      chatError.textContent = error instanceof Error ? error.message : String(error)
    }
  }

  addEventListener('pagehide', () => {
    editor?.destroy()
    provider.destroy()
  })
}

function accessText(info: Pick<DocumentInfo, 'canWrite' | 'whose' | 'private' | 'readOnly'>): string {
  const mode = info.canWrite ? 'editing' : 'read-only'
  return `${mode} · ${info.private ? 'private' : 'public'}${info.readOnly ? ' · locked' : ''} · ${info.whose}`
}

/** A remote caret: drawn only for a state that names someone, with its checked colour and text name. */
function caret(user: PresentUser | null): HTMLElement {
  if (!user) return h('span', { class: 'caret' })
  const element = h('span', {
    class: `caret${user.agent ? ' agent' : ''}`,
    style: `border-color:${user.color}`,
  })
  element.append(
    h(
      'span',
      { class: 'caret-label', style: `background:${user.color}` },
      user.agent ? `✦ ${user.name}` : user.name,
    ),
  )
  return element
}

function parse(payload: string): { type?: string; sectionId?: string } | null {
  try {
    return JSON.parse(payload) as { type?: string; sectionId?: string }
  } catch {
    return null
  }
}
