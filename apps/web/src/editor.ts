/**
 * `/d/<slug>`: one document in TipTap with the project's schema, bound to the live Yjs document through
 * the Hocuspocus provider (signed in by the browser's cookie), with the others present (their names and
 * coloured carets; agents marked as agents while their edits land), the outline beside it, the chat room
 * of the heading being read, export, and the owner's sharing controls. This file lays out the page and
 * wires them: presence in presence.ts, the outline in outline.ts, the chat in chat.ts.
 */
import { ALL_EDITOR_TYPES, EDITOR_TYPES_PARAM, extensions, FRAGMENT_NAME } from '@collab/doc-schema/editor'
import { HocuspocusProvider } from '@hocuspocus/provider'
import { Editor } from '@tiptap/core'
import Collaboration from '@tiptap/extension-collaboration'
import CollaborationCaret from '@tiptap/extension-collaboration-caret'
import * as Y from 'yjs'
import { ApiError, api, type DocumentInfo, slugPath } from './api.ts'
import type { Boot } from './boot.ts'
import { chatPanel } from './chat.ts'
import { authFailureKind, closeKind } from './close-reasons.ts'
import { deleteDialog, duplicate, renameDialog } from './doc-actions.ts'
import { clear, colorOf, h } from './dom.ts'
import { header } from './header.ts'
import { historyPanel } from './history.ts'
import { importNotesKey, MAX_IMPORT_NOTES } from './list.ts'
import { headingAbove, outlinePanel } from './outline.ts'
import { OwnTyping } from './own-typing.ts'
import { showPresence } from './presence.ts'
import { shareDialog } from './share.ts'
import { sinceLastLook } from './since-last-look.ts'
import { suggestionsPanel } from './suggestions.ts'
import { toolbar } from './toolbar.ts'

/** This editor knows the project's whole schema, and says so (docs/server.md, Editor input). */
const DECLARED_TYPES = `${EDITOR_TYPES_PARAM}=${encodeURIComponent(ALL_EDITOR_TYPES)}`

/** How long changes wait unsent before the status says "Sending…" (a keystroke's round trip is shorter). */
const SENDING_SHOWN_AFTER_MS = 500

export async function editorView(root: HTMLElement, boot: Boot, slug: string): Promise<void> {
  // The document's first blocks as the server served them with the page (http/first-screen.ts): read-only,
  // readable before this script ran; shown in the editor's place until the editor holds the synced document.
  const firstScreen = document.getElementById('first-screen')
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
  const presence = h('ul', { class: 'presence', 'aria-label': 'Who is here' })
  const presenceCount = h('span', { class: 'presence-count', 'aria-live': 'polite' })
  const banner = h('p', { class: 'banner', role: 'alert', hidden: true })
  const outline = h('ol', { class: 'outline', 'aria-label': 'Outline' })
  const chatElement = h('section', { class: 'chat', 'aria-label': 'Chat' })
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
  const duplicateButton = h(
    'button',
    { type: 'button', onclick: () => duplicate(slug, info, (text) => showBanner(text)) },
    'Duplicate',
  )
  const titleText = h('span', { class: 'doc-title' }, info.title)
  /** Sets the title: the text of the document's first heading, in the live document. */
  function rename(title: string): string | null {
    const first = editor?.state.doc.firstChild
    if (!editor?.isEditable) return 'You may not edit this document now.'
    if (first?.type.name !== 'heading')
      return 'This document has no title heading: type one on its first line.'
    editor.view.dispatch(editor.state.tr.insertText(title, 1, 1 + first.content.size))
    titleText.textContent = title
    document.title = title
    return null
  }
  const renameButton = info.canWrite
    ? h(
        'button',
        { type: 'button', onclick: () => renameDialog(titleText.textContent ?? info.title, rename) },
        'Rename',
      )
    : null
  const deleteButton =
    info.whose === 'yours'
      ? h('button', { type: 'button', onclick: () => deleteDialog(slug, info) }, 'Delete')
      : null
  const access = h('span', { class: 'access' }, accessText(info))
  const history = historyPanel(slug, info.canWrite)
  const sinceLook = sinceLastLook(slug, (base) => void history.openAt(base))
  const suggestions = suggestionsPanel(info.canWrite)

  clear(
    root,
    header(
      boot,
      titleText,
      h('span', { class: 'doc-state' }, access, status),
      h('div', { class: 'here' }, presenceCount, presence),
      h(
        'span',
        { class: 'doc-actions' },
        renameButton ?? '',
        history.button,
        exportLink,
        duplicateButton,
        shareButton ?? '',
        deleteButton ?? '',
      ),
    ),
    banner,
    sinceLook.element,
    h(
      'div',
      { class: 'workspace' },
      h('nav', { class: 'side' }, h('h2', {}, 'Outline'), outline),
      h('main', { class: 'page' }, suggestions.element, mount),
      chatElement,
    ),
    history.element,
  )
  if (firstScreen) {
    mount.hidden = true
    mount.before(firstScreen)
  }

  if (new URLSearchParams(location.search).get('imported')) {
    // The import's own list of what it adapted, left by the list page; the docs only if it is gone (a reload).
    const notes = readImportNotes(slug)
    showBanner(
      notes.length
        ? 'Imported. Some Markdown had no exact equivalent here and was adapted:'
        : 'Imported. Some Markdown had no exact equivalent here and was adapted (docs/document-model.md lists how).',
      'info',
    )
    if (notes.length) banner.append(h('ul', {}, ...notes.map((note) => h('li', {}, note))))
  }

  function showBanner(text: string, kind: 'error' | 'info' = 'error') {
    banner.hidden = false
    banner.className = `banner ${kind}`
    banner.textContent = text
  }

  // What this page says of itself until the server says how the others see it (a `presence` notice): the
  // server sets the name and colour of every state from the signed-in principal, whatever a page sends.
  const me = { name: boot.name ?? boot.handle, color: colorOf(boot.handle) }
  const ydoc = new Y.Doc()
  // Someone else's edit (it arrives through the provider): an open history panel lists new versions.
  ydoc.on('update', (_update: Uint8Array, origin: unknown) => {
    if (origin === provider) history.noteChange()
  })
  const socketUrl = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/?${DECLARED_TYPES}`
  let editor: Editor | undefined
  let scope: 'read-write' | 'readonly' = info.canWrite ? 'read-write' : 'readonly'

  const chat = chatPanel(chatElement, slug, info.canWrite)
  let connected = false
  let sendingTimer: ReturnType<typeof setTimeout> | undefined
  const setStatus = (text: string) => {
    if (status.textContent !== text) status.textContent = text
  }
  /** Set once the server ended this page's access (or sign-in): the status says so, nothing reconnects. */
  let ended: string | undefined
  let bar: HTMLElement | undefined
  /** Write access as the server last said: the editor, the formatting bar, the chat box and the label follow it. */
  const applyScope = () => {
    const canWrite = scope === 'read-write'
    editor?.setEditable(canWrite)
    if (bar) bar.hidden = !canWrite
    chat.setCanWrite(canWrite)
    history.setCanWrite(canWrite)
    suggestions.setCanWrite(canWrite)
    access.textContent = accessText({ ...info, canWrite })
  }
  /** The server closed this page's access for good: say so in the banner and the status, stop reconnecting. */
  const end = (statusText: string, message: string) => {
    ended = statusText
    firstScreen?.querySelector('.first-screen-more')?.remove() // the rest is not coming
    scope = 'readonly'
    applyScope()
    status.textContent = statusText
    showBanner(message)
    // Destroyed after this event is handled: the provider would otherwise reconnect and be refused again.
    setTimeout(() => provider.destroy(), 0)
  }
  /** A person's connections to a document are capped per server (docs/server.md, Limits). */
  const tooManyTabs = () =>
    end(
      'Too many tabs',
      'This document is open in too many of your tabs or windows. Close some of them, then reload this page.',
    )
  suggestions.attach(ydoc)
  const provider = new HocuspocusProvider({
    url: socketUrl,
    name: info.room,
    document: ydoc,
    // The socket signs in with this page's session cookie; the provider needs some token string.
    token: 'session',
    onAuthenticated: ({ scope: granted }) => {
      // Also when the server takes write access away or gives it back while the page is open
      // (collab/access-watch.ts): the editor, the bar and the chat box follow without a reload.
      scope = granted === 'readonly' ? 'readonly' : 'read-write'
      applyScope()
    },
    onAuthenticationFailed: ({ reason }) => {
      const kind = authFailureKind(reason)
      if (kind === 'too-many-opens')
        end(
          'Not connected',
          'Your account opened too many documents at once (more than the server takes in a few seconds). Reload this page in a moment.',
        )
      else if (kind === 'too-many-tabs') tooManyTabs()
      else
        end(
          'Not connected',
          'This document could not be opened: it was deleted, or you may no longer read it. Ask its owner, or go back to your documents.',
        )
    },
    onClose: ({ event }) => {
      // The server's reasons are written for any client; a person gets what to do next (close-reasons.ts).
      const kind = closeKind(event.reason)
      if (kind === 'reconnect' || ended) return // the provider reconnects and resends
      if (kind === 'signed-out') {
        end('Signed out', 'You were signed out (here or in another tab). Sign in again to keep editing.')
        banner.append(
          ' ',
          h('a', { href: `/sign-in?next=${encodeURIComponent(location.pathname)}` }, 'Sign in'),
        )
      } else if (kind === 'too-many-tabs') {
        tooManyTabs() // opened together with others past the limit: closed once connected
      } else if (kind === 'no-access') {
        end(
          'No access',
          'You no longer have access to this document: its owner changed who may open it. What you see is the text as it was.',
        )
      } else if (kind === 'document-full') {
        end(
          'Document full',
          'This document has reached the most one document may hold, and your last change was not saved. Use Duplicate to make a fresh copy of it and keep writing there.',
        )
      } else {
        end('Disconnected', `Disconnected: ${event.reason}. Reload the page to continue.`)
      }
    },
    onStatus: ({ status: state }) => {
      connected = state === 'connected'
      if (ended) return
      status.textContent =
        state === 'connected'
          ? 'Connected'
          : state === 'connecting'
            ? 'Connecting…'
            : 'Offline: your changes are kept and sent when back'
    },
    onUnsyncedChanges: ({ number }) => {
      // Every keystroke is unsent for a moment: "Sending…" shows only when changes wait longer than
      // SENDING_SHOWN_AFTER_MS, so typing does not redraw the header twice a key.
      clearTimeout(sendingTimer)
      if (!connected || ended) return
      if (number === 0) setStatus('Connected')
      else
        sendingTimer = setTimeout(() => connected && !ended && setStatus('Sending…'), SENDING_SHOWN_AFTER_MS)
    },
    onStateless: ({ payload }) => {
      const notice = parseNotice(payload)
      if (notice?.type === 'presence') {
        // How the server shows this page's person to the others: the list and its own awareness follow.
        presenceList.setMe(notice.user)
        return
      }
      chat.notified(payload)
    },
    onSynced: () => {
      // Marks for the benchmarks' first-paint breakdown (performance.getEntriesByType('mark')).
      performance.mark('collab:synced')
      if (!editor) {
        createEditor()
        void sinceLook.start()
      }
      performance.mark('collab:editor')
    },
  })

  const presenceList = showPresence(presence, presenceCount, provider.awareness!, me, ydoc.clientID)

  function createEditor() {
    // Made only once the document has synced: an editor bound to an empty document would add its own
    // empty title heading, which would then sit beside the real one.
    const made = new Editor({
      element: mount,
      editable: scope === 'read-write',
      extensions: [
        ...extensions,
        OwnTyping,
        Collaboration.configure({ fragment: ydoc.getXmlFragment(FRAGMENT_NAME) }),
        CollaborationCaret.configure({
          provider,
          user: me,
          render: presenceList.caret,
          selectionRender: presenceList.selection,
        }),
      ],
      editorProps: { attributes: { class: 'prose', spellcheck: 'true', 'aria-label': info.title } },
    })
    editor = made
    bar = toolbar(made)
    mount.before(bar)
    applyScope()
    // In the same task as the editor is built, so no frame shows both or neither: the read-only first
    // screen goes, the editor (built hidden, no layout while it filled) takes its place.
    firstScreen?.remove()
    mount.hidden = false
    const outlineView = outlinePanel(outline, made, (text) => chat.showTitle(text))
    // The chat follows the heading above the cursor, and the outline marks it.
    const followSelection = () => {
      if (chat.follow(headingAbove(made.state.doc, made.state.selection.from))) {
        outlineView.setCurrent(chat.section)
      }
    }
    // Told what changed: typing in a paragraph leaves the outline alone, without a walk of the document.
    made.on('update', ({ transaction }) =>
      outlineView.refresh({ before: transaction.before, after: transaction.doc }),
    )
    made.on('selectionUpdate', followSelection)
    outlineView.refresh()
    followSelection()
  }

  addEventListener('pagehide', () => {
    editor?.destroy()
    provider.destroy()
  })
}

/** The adaptations the list page left for this document's import (read once, then removed). */
function readImportNotes(slug: string): string[] {
  try {
    const key = importNotesKey(slug)
    const stored = JSON.parse(sessionStorage.getItem(key) ?? '[]') as unknown
    sessionStorage.removeItem(key)
    return Array.isArray(stored)
      ? stored.filter((n): n is string => typeof n === 'string').slice(0, MAX_IMPORT_NOTES)
      : []
  } catch {
    return []
  }
}

function parseNotice(payload: string): { type?: unknown; user?: unknown } | null {
  try {
    const parsed = JSON.parse(payload) as unknown
    return typeof parsed === 'object' && parsed !== null ? parsed : null
  } catch {
    return null
  }
}

function accessText(info: Pick<DocumentInfo, 'canWrite' | 'whose' | 'private' | 'readOnly'>): string {
  const mode = info.canWrite ? 'editing' : 'read-only'
  return `${mode} · ${info.private ? 'private' : 'public'}${info.readOnly ? ' · locked' : ''} · ${info.whose}`
}
