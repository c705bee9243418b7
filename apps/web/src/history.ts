/**
 * The document page's history panel (issue 27; docs/web.md, docs/history.md): a "History" button opens
 * a side panel (the whole screen on a phone) listing the document's versions newest first, each with
 * when, why or its name, who (agents marked ✦ with the app they wrote through) and what changed.
 * Selecting one shows what changed from it to now (removed and added blocks marked by sign, by line style
 * and in words, not by colour alone) and its text as Markdown; a writer may restore it, or undo only what
 * it changed (later edits by others stay), each after a confirming dialog.
 * Everything the server sends is set as text, never as HTML. Escape closes the panel and gives focus back
 * to the button; arrow keys move between versions.
 */
import { confirmDialog, failure } from './confirm-dialog.ts'
import { clear, h, when } from './dom.ts'
import {
  fetchChanges,
  fetchPreview,
  fetchVersions,
  restoreVersion,
  revertVersion,
  type Version,
} from './history-client.ts'
import { authorsLine, authorsNode, kindText, plural, sectionNode, summaryText } from './history-view.ts'
import './history.css'

export type HistoryPanel = {
  /** The header's "History" button: opens and closes the panel. */
  readonly button: HTMLButtonElement
  /** The panel itself (put anywhere on the page: it is fixed to the window's side). */
  readonly element: HTMLElement
  /** Offers Restore only to someone who may write now (access can change while the page is open). */
  setCanWrite(canWrite: boolean): void
  /** The document changed (someone else's edit arrived): an open panel lists new versions soon after. */
  noteChange(): void
  /** Opens the panel on `version` (found in the list, older pages read as needed), showing changes to now. */
  openAt(version: Version | null): Promise<void>
}

/**
 * An open panel asks for new versions this long after someone else's edit arrives (edits in a burst ask
 * once), and at least this often while open: an automatic version can be taken minutes after the edit
 * (MIN_VERSION_INTERVAL_MS on the server), with nothing arriving on the page then.
 */
const REFRESH_AFTER_CHANGE_MS = 2_000
const REFRESH_EVERY_MS = 20_000
/** Older pages `openAt` reads at most looking for its version. */
const OPEN_AT_PAGES = 10

export function historyPanel(slug: string, initialCanWrite: boolean): HistoryPanel {
  let canWrite = initialCanWrite
  let cursor: string | null = null
  /** The versions listed, by id (openAt selects one by its button). */
  const listed = new Map<string, Version>()
  /** Bumped at each open and each selection: a late answer for an earlier one is dropped. */
  let generation = 0

  const button = h(
    'button',
    { type: 'button', 'aria-expanded': 'false', 'aria-controls': 'history-panel' },
    'History',
  )
  const heading = h('h2', { id: 'history-heading', tabindex: '-1' }, 'History')
  const status = h('p', { class: 'history-status', role: 'status' })
  const list = h('ol', { class: 'versions', 'aria-label': 'Versions, newest first' })
  const older = h(
    'button',
    { type: 'button', class: 'older', hidden: true, onclick: () => void loadPage(false) },
    'Show older versions',
  )
  const detail = h('section', {
    class: 'version-detail',
    'aria-labelledby': 'version-heading',
    tabindex: '0',
    hidden: true,
  })
  const close = h('button', { type: 'button', onclick: () => hide() }, 'Close')
  const element = h(
    'aside',
    { class: 'history', id: 'history-panel', 'aria-labelledby': 'history-heading', hidden: true },
    h('div', { class: 'history-head' }, heading, close),
    status,
    h('div', { class: 'versions-box' }, list, older),
    detail,
  )

  let refreshTimer: ReturnType<typeof setTimeout> | undefined
  let refreshEvery: ReturnType<typeof setInterval> | undefined
  /** Lists versions newer than the newest shown at the top, keeping the selection and what is open. */
  async function refresh() {
    if (element.hidden) return
    const mine = generation
    try {
      const page = await fetchVersions(slug, null)
      if (mine !== generation || element.hidden) return
      const shown = new Set(
        Array.from(list.querySelectorAll<HTMLElement>('button.version')).map((b) => b.dataset.versionId),
      )
      const fresh = page.versions.filter((version) => !shown.has(version.id))
      if (!fresh.length) return
      list.prepend(...fresh.map(versionItem))
      status.textContent = `${plural(fresh.length, 'new version')} since the panel opened; ${plural(list.childElementCount, 'version')}${cursor ? ' so far' : ''}, newest first.`
    } catch {
      // The next change or tick tries again; the list shown stays.
    }
  }
  function stopRefreshing() {
    clearTimeout(refreshTimer)
    clearInterval(refreshEvery)
  }

  function show() {
    element.hidden = false
    clearInterval(refreshEvery)
    refreshEvery = setInterval(() => void refresh(), REFRESH_EVERY_MS)
    button.setAttribute('aria-expanded', 'true')
    // Below the header where it stays on screen (desktop), over the whole window where it scrolls away (phones).
    const bar = document.querySelector('header.bar')
    const sticky = bar && getComputedStyle(bar).position === 'sticky'
    element.style.setProperty('--history-top', sticky ? `${bar.getBoundingClientRect().bottom}px` : '0px')
    heading.focus()
    return loadPage(true)
  }
  function hide() {
    if (element.hidden) return
    stopRefreshing()
    element.hidden = true
    button.setAttribute('aria-expanded', 'false')
    generation++
    button.focus()
  }
  button.addEventListener('click', () => (element.hidden ? void show() : hide()))
  element.addEventListener('keydown', (event) => {
    if (event.key === 'Escape' && !document.querySelector('dialog[open]')) {
      event.preventDefault()
      hide()
    }
    if (event.key !== 'ArrowDown' && event.key !== 'ArrowUp') return
    const buttons = Array.from(list.querySelectorAll<HTMLButtonElement>('button.version'))
    const at = buttons.indexOf(document.activeElement as HTMLButtonElement)
    if (at < 0) return
    event.preventDefault()
    buttons[Math.max(0, Math.min(buttons.length - 1, at + (event.key === 'ArrowDown' ? 1 : -1)))]?.focus()
  })

  /** The first page again (at each open), or the next older one. */
  async function loadPage(first: boolean) {
    const mine = first ? ++generation : generation
    if (first) {
      cursor = null
      listed.clear()
      clear(list)
      detail.hidden = true
    }
    status.textContent = 'Loading versions…'
    older.hidden = true
    try {
      const page = await fetchVersions(slug, first ? null : cursor)
      if (mine !== generation) return
      cursor = page.cursor
      for (const version of page.versions) list.append(versionItem(version))
      older.hidden = cursor === null
      status.textContent = list.childElementCount
        ? `${plural(list.childElementCount, 'version')}${cursor ? ' so far' : ''}, newest first. Choose one to compare it with now.`
        : 'No versions yet: one is taken after edits.'
    } catch (error) {
      if (mine === generation) status.textContent = `Could not load the history: ${failure(error)}`
    }
  }

  function versionItem(version: Version): HTMLElement {
    listed.set(version.id, version)
    const item = h(
      'button',
      { type: 'button', class: 'version', 'aria-pressed': 'false', 'data-version-id': version.id },
      h(
        'span',
        { class: 'version-top' },
        h('time', { datetime: version.createdAt }, version.createdAt ? when(version.createdAt) : ''),
        h('span', { class: 'version-kind' }, kindText(version)),
      ),
      authorsNode(version.authors),
      h(
        'span',
        { class: 'version-summary' },
        summaryText(version.summary, version.reason === 'created' || version.reason === 'import'),
      ),
    )
    item.addEventListener('click', () => void select(version, item))
    return h('li', {}, item)
  }

  async function select(version: Version, item: HTMLButtonElement) {
    for (const other of Array.from(list.querySelectorAll('button.version')))
      other.setAttribute('aria-pressed', 'false')
    item.setAttribute('aria-pressed', 'true')
    const mine = ++generation
    const title = h(
      'h3',
      { id: 'version-heading' },
      `${kindText(version)}, ${version.createdAt ? when(version.createdAt) : ''}`,
    )
    const body = h(
      'div',
      { class: 'diff', 'aria-busy': 'true' },
      h('p', { class: 'note' }, 'Comparing with now…'),
    )
    const preview = h('pre', { class: 'preview' })
    const legend = h(
      'p',
      { class: 'legend note' },
      h('span', { class: 'sign del-sign', 'aria-hidden': 'true' }, '−'),
      ' struck through: in this version, removed since. ',
      h('span', { class: 'sign ins-sign', 'aria-hidden': 'true' }, '+'),
      ' underlined: added since.',
    )
    clear(
      detail,
      title,
      restoreRow(version),
      h('h4', { class: 'diff-heading' }, 'From this version to now'),
      legend,
      body,
      h('details', { class: 'preview-box' }, h('summary', {}, "This version's text (Markdown)"), preview),
    )
    detail.hidden = false
    item.scrollIntoView({ block: 'nearest' }) // the list is shorter now the detail shows
    const [changes, markdown] = await Promise.allSettled([
      fetchChanges(slug, version.id),
      fetchPreview(slug, version.id),
    ])
    if (mine !== generation) return
    body.removeAttribute('aria-busy')
    legend.hidden = changes.status === 'rejected' || !changes.value.sections.length
    if (changes.status === 'rejected')
      clear(body, h('p', { class: 'error' }, `Could not compare: ${failure(changes.reason)}`))
    else if (!changes.value.sections.length)
      clear(body, h('p', { class: 'note' }, 'No differences: the document now holds the same text.'))
    else clear(body, ...changes.value.sections.map(sectionNode))
    if (changes.status === 'fulfilled') {
      const since = changes.value.authors
      if (since.length) body.prepend(authorsLine('Changed since by ', since))
      for (const note of changes.value.notes) body.append(h('p', { class: 'note' }, note))
    }
    if (markdown.status === 'fulfilled') {
      preview.textContent = markdown.value.markdown
      if (markdown.value.note) preview.after(h('p', { class: 'note' }, markdown.value.note))
    } else preview.textContent = `Could not load this version: ${failure(markdown.reason)}`
  }

  /** The writer's actions on a version: restore it whole, or undo only what it changed (keeping later edits). */
  function restoreRow(version: Version): HTMLElement {
    const label = `${kindText(version)}, ${version.createdAt ? when(version.createdAt) : ''}`
    const first = !version.summary && (version.reason === 'created' || version.reason === 'import')
    return h(
      'p',
      { class: 'restore-row', hidden: !canWrite },
      h(
        'button',
        {
          type: 'button',
          class: 'restore',
          onclick: () =>
            confirmAction({
              title: 'Restore this version?',
              label,
              text: "The document's text becomes this version's, for everyone, as a new change. Its text now is kept in history: you can restore it again from there.",
              act: 'Restore',
              run: async () => {
                const done = await restoreVersion(slug, version.id)
                return done.changed
                  ? `Restored "${label}". The text before it is kept as a version: restore that one to undo this.`
                  : `The document already holds the text of "${label}": nothing changed.`
              },
            }),
        },
        'Restore this version',
      ),
      first
        ? null
        : h(
            'button',
            {
              type: 'button',
              class: 'undo',
              onclick: () =>
                confirmAction({
                  title: "Undo this version's changes?",
                  label: `${label}: ${summaryText(version.summary)}`,
                  text: 'What this version changed is taken back, for everyone, as a new change; changes made since by anyone else stay. If someone has changed the same text since, nothing changes and you are told where.',
                  act: 'Undo changes',
                  run: async () => {
                    const done = await revertVersion(slug, version.id)
                    return done.changed
                      ? `Undid the changes of "${label}". The text before is kept as a version.`
                      : `The changes of "${label}" were already gone: nothing changed.`
                  },
                }),
            },
            "Undo this version's changes",
          ),
    )
  }

  /** The dialog before a restore or an undo: it names the version and says what happens. */
  function confirmAction(ask: {
    title: string
    label: string
    text: string
    act: string
    run: () => Promise<string>
  }) {
    confirmDialog({
      id: 'history-action-heading',
      title: ask.title,
      body: [h('p', { class: 'action-version' }, ask.label), h('p', {}, ask.text)],
      act: ask.act,
      run: async (close) => {
        const said = await ask.run()
        close()
        await loadPage(true)
        status.textContent = said
        heading.focus()
      },
      onClose: () => {
        if (!element.hidden && document.activeElement === document.body) heading.focus()
      },
    })
  }

  return {
    button,
    element,
    setCanWrite(next: boolean) {
      canWrite = next
      for (const row of Array.from(detail.querySelectorAll<HTMLElement>('.restore-row')))
        row.hidden = !canWrite
    },
    noteChange() {
      if (element.hidden) return
      clearTimeout(refreshTimer)
      refreshTimer = setTimeout(() => void refresh(), REFRESH_AFTER_CHANGE_MS)
    },
    async openAt(version: Version | null) {
      if (element.hidden) await show()
      const find = () =>
        version
          ? list.querySelector<HTMLButtonElement>(
              `button.version[data-version-id="${CSS.escape(version.id)}"]`,
            )
          : (Array.from(list.querySelectorAll<HTMLButtonElement>('button.version')).at(-1) ?? null)
      for (let page = 0; page < OPEN_AT_PAGES && version && !find() && cursor; page++) await loadPage(false)
      const item = find()
      if (!item) return
      const shown = listed.get(item.dataset.versionId ?? '')
      if (!shown) return
      item.focus()
      await select(shown, item)
    },
  }
}
