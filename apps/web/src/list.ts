/** `/`: the person's documents, shared and public ones, search, new document, Markdown import. */
import { ApiError, api, type DocumentInfo, type DocumentSummary } from './api.ts'
import type { Boot } from './boot.ts'
import { DELETED_PARAM } from './doc-actions.ts'
import { clear, h, when } from './dom.ts'
import { header } from './header.ts'

/** How many of an import's adaptations the document's page lists. */
export const MAX_IMPORT_NOTES = 20

/** Where the list leaves an import's adaptations for the document's page (this tab's session storage). */
export const importNotesKey = (slug: string) => `collab:import-notes:${slug}`

type Listing = {
  documents: DocumentSummary[]
  total: number
  nextOffset?: number | null
  more?: boolean
  /** A search was ranked among this many most recently changed documents (docs/server.md, Search)... */
  narrowed?: number
  /** ...of its matches, which hold more text than one search ranks, rather than in scope (a broad query). */
  narrowedAmong?: 'matches'
}

/** A one-line form of `input` and its submit button; `submit` runs instead of the page's own submission. */
function inlineForm(input: HTMLElement, label: string, submit: () => Promise<void>): HTMLElement {
  return h(
    'form',
    {
      class: 'inline',
      onsubmit: async (event: Event) => {
        event.preventDefault()
        await submit()
      },
    },
    input,
    h('button', { type: 'submit' }, label),
  )
}

export function listView(root: HTMLElement, boot: Boot): void {
  const params = new URLSearchParams(location.search)
  let scope = params.get('scope') === 'public' ? 'public' : 'mine'
  const status = h('p', { class: 'status', role: 'status' })
  const rows = h('tbody')
  const search = h('input', {
    type: 'search',
    name: 'q',
    placeholder: 'Search titles and text',
    'aria-label': 'Search',
  })
  search.value = params.get('q') ?? ''
  const tabs = h('div', { class: 'tabs', role: 'tablist' })
  const problem = h('p', { class: 'error', role: 'alert', hidden: true })
  // A broad search (docs/server.md, Search): said above the list, where the first rows are read.
  const narrowNote = h('p', { class: 'banner info narrow-note', role: 'status', hidden: true })
  // Arriving from a deletion (doc-actions.ts): say which document went, once.
  const deletedTitle = params.get(DELETED_PARAM)
  const deletedNote = deletedTitle
    ? h('p', { class: 'banner info', role: 'status' }, `Deleted "${deletedTitle}".`)
    : null

  function fail(error: unknown) {
    problem.hidden = false
    problem.textContent = error instanceof ApiError ? error.message : String(error)
  }

  async function load(offset = 0) {
    problem.hidden = true
    const query = new URLSearchParams({ scope })
    if (search.value.trim()) query.set('q', search.value.trim())
    if (offset) query.set('offset', String(offset))
    history.replaceState(null, '', `/?${query}`)
    status.textContent = 'Loading…'
    try {
      const listing = await api<Listing>(`/documents?${query}`)
      if (offset === 0) rows.replaceChildren()
      for (const doc of listing.documents) rows.append(row(doc))
      const shown = rows.children.length
      status.textContent =
        shown === 0
          ? search.value.trim()
            ? 'No document matches.'
            : scope === 'mine'
              ? 'No documents yet: create one or import a Markdown file.'
              : 'No public documents.'
          : `${shown} of ${listing.total} document${listing.total === 1 ? '' : 's'}${listing.more ? ' (the best matches; narrow the search for others)' : ''}`
      narrowNote.hidden = !listing.narrowed
      narrowNote.textContent = listing.narrowed
        ? listing.narrowedAmong === 'matches'
          ? `The documents holding these words are so long that only the ${listing.narrowed.toLocaleString('en-US')} most recently changed of them were ranked. Add a word, or a "phrase" in quotes, to search them all.`
          : `So many documents hold these words that only the ${listing.narrowed.toLocaleString('en-US')} most recently changed were searched. Add a word, or a "phrase" in quotes, to search them all.`
        : ''
      if (listing.nextOffset)
        status.append(
          ' ',
          h('button', { type: 'button', onclick: () => load(listing.nextOffset ?? 0) }, 'Show more'),
        )
    } catch (error) {
      status.textContent = ''
      fail(error)
    }
  }

  function row(doc: DocumentSummary): HTMLElement {
    return h(
      'tr',
      {},
      h(
        'td',
        {},
        h('a', { href: `/d/${encodeURIComponent(doc.slug)}` }, doc.title || doc.slug),
        // A text node: whatever the document holds, it is never read as HTML here.
        doc.snippet ? h('p', { class: 'snippet' }, doc.snippet) : null,
      ),
      h('td', {}, doc.whose),
      h('td', {}, doc.private ? 'private' : 'public', doc.readOnly ? ', read-only' : ''),
      h('td', {}, when(doc.updatedAt)),
    )
  }

  function renderTabs() {
    clear(
      tabs,
      ...(['mine', 'public'] as const).map((name) =>
        h(
          'button',
          {
            type: 'button',
            role: 'tab',
            'aria-selected': String(scope === name),
            onclick: () => {
              scope = name
              renderTabs()
              void load()
            },
          },
          name === 'mine' ? 'Yours and shared' : 'Public',
        ),
      ),
    )
  }

  const title = h('input', {
    type: 'text',
    name: 'title',
    placeholder: 'Title',
    required: true,
    maxlength: '200',
    'aria-label': 'New document title',
  })
  const create = inlineForm(title, 'New document', async () => {
    try {
      const doc = await api<DocumentInfo>('/documents', {
        method: 'POST',
        json: { title: title.value, markdown: '' },
      })
      location.assign(`/d/${encodeURIComponent(doc.slug)}`)
    } catch (error) {
      fail(error)
    }
  })

  const file = h('input', {
    type: 'file',
    accept: '.md,.markdown,text/markdown,text/plain',
    'aria-label': 'Markdown file to import',
  })
  const importForm = inlineForm(file, 'Import Markdown', async () => {
    const chosen = file.files?.[0]
    if (!chosen) return fail(new Error('file: choose a Markdown file first'))
    try {
      status.textContent = `Importing ${chosen.name}…`
      // The file as it is (the browser streams it; the server hands its bytes to its worker), its name
      // the title when it has no heading.
      const name = chosen.name.replace(/\.(md|markdown|txt)$/i, '')
      const doc = await api<DocumentInfo & { changes: string[] }>(
        `/documents?name=${encodeURIComponent(name)}`,
        { method: 'POST', body: chosen, type: 'text/markdown; charset=utf-8' },
      )
      // What was adapted, for the document's page to list (it reads and removes it).
      if (doc.changes.length)
        sessionStorage.setItem(
          importNotesKey(doc.slug),
          JSON.stringify(doc.changes.slice(0, MAX_IMPORT_NOTES)),
        )
      location.assign(`/d/${encodeURIComponent(doc.slug)}${doc.changes.length ? '?imported=1' : ''}`)
    } catch (error) {
      status.textContent = ''
      fail(error)
    }
  })

  let timer: ReturnType<typeof setTimeout> | undefined
  search.addEventListener('input', () => {
    clearTimeout(timer)
    timer = setTimeout(() => void load(), 250)
  })

  clear(
    root,
    header(boot),
    h(
      'main',
      { class: 'list' },
      h('div', { class: 'actions' }, create, importForm),
      deletedNote,
      problem,
      h('div', { class: 'find' }, tabs, search),
      narrowNote,
      h(
        'table',
        { class: 'docs-table' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            h('th', {}, 'Title'),
            h('th', {}, 'Whose'),
            h('th', {}, 'Access'),
            h('th', {}, 'Changed'),
          ),
        ),
        rows,
      ),
      status,
    ),
  )
  renderTabs()
  void load()
}
