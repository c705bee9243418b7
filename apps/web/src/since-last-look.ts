/**
 * "Since you last looked" (issue 27; docs/history.md, "History on the web page"): when a person opens a
 * document that agents changed while they were away, a notice under the header names the agents and the
 * apps they wrote through, and "Review changes" opens the history panel on the version the person last
 * saw, which shows everything changed from it to now (with who changed it).
 *
 * What "last looked" means: the newest version the page knew of the last time the person had the
 * document open, in any browser: the server keeps it per user and document (`GET`/`PUT …/last-look`,
 * http/api-last-look.ts; a mark this browser kept before is read once when the server has none).
 * Versions are the server's, with the server's times, so a wrong clock here cannot hide a change. The mark moves forward
 * while the page is open and visible (the person sees changes arrive live), and when the notice is
 * reviewed or dismissed; while a notice waits unanswered it stays where it was, so leaving without
 * reading it shows it again next time. Only versions with an agent among their authors raise the notice:
 * people's own typing does not.
 */
import { ApiError, api, slugPath } from './api.ts'
import { h } from './dom.ts'
import { fetchVersions, type Version, type VersionAuthor } from './history-client.ts'

/** Pages of versions read back to find the last seen one (a page is the server's default size). */
const LOOK_BACK_PAGES = 5
/** How often an open, visible page moves its mark to the newest version. */
const MARK_EVERY_MS = 60_000
/** Agents named in the notice at most; the rest are counted. */
const AGENTS_NAMED = 3

type Mark = { id: string; createdAt: string }

const lookPath = (slug: string) => `${slugPath(slug)}/last-look`
/** Where pages before the server kept the mark kept it: read once when the server has none. */
const storageKey = (slug: string) => `collab.lastLook.${slug}`

function storedMark(slug: string): Mark | null {
  try {
    const raw = JSON.parse(localStorage.getItem(storageKey(slug)) ?? 'null') as unknown
    if (typeof raw !== 'object' || raw === null) return null
    const { id, createdAt } = raw as Record<string, unknown>
    return typeof id === 'string' && typeof createdAt === 'string' ? { id, createdAt } : null
  } catch {
    return null
  }
}

/** The person's mark, kept by the server for their account (every browser and device shares it). */
async function readMark(slug: string): Promise<Mark | null> {
  const answer = await api<{ mark: { versionId?: unknown; createdAt?: unknown } | null }>(lookPath(slug))
  const mark = answer?.mark
  if (mark && typeof mark.versionId === 'string' && typeof mark.createdAt === 'string')
    return { id: mark.versionId, createdAt: mark.createdAt }
  return storedMark(slug)
}

/** Moves the mark to `version` (the server keeps the newer of it and the mark it holds). */
async function writeMark(slug: string, version: Version | undefined): Promise<void> {
  if (!version) return
  try {
    await api(lookPath(slug), { method: 'PUT', json: { versionId: version.id } })
    localStorage.removeItem(storageKey(slug))
  } catch {
    // Offline, or the version thinned meanwhile: the mark moves at the next try.
  }
}

/** An agent as the notice names it: the server's own line when it sent one, else who and the app. */
function agentText(author: VersionAuthor): string {
  if (author.label) return author.label
  return author.app ? `${author.who}'s agent via "${author.app}"` : `${author.who}'s agent`
}

export type ChangesSince = {
  /** Where, versions newer than the mark with agents among their authors. */
  newer: Version[]
  /** The newest version at or before the mark (the text the person last saw), when within reach. */
  base: Version | null
  /** The newest version now. */
  newest: Version | undefined
  /** True when the mark was not found within LOOK_BACK_PAGES pages (more changed than was read). */
  partial: boolean
}

/** Reads versions newest first back to the mark (at most LOOK_BACK_PAGES pages). */
export async function changesSince(slug: string, mark: Mark): Promise<ChangesSince> {
  const newer: Version[] = []
  let newest: Version | undefined
  let cursor: string | null = null
  for (let page = 0; page < LOOK_BACK_PAGES; page++) {
    const got = await fetchVersions(slug, cursor)
    newest ??= got.versions[0]
    for (const version of got.versions) {
      if (version.id === mark.id || version.createdAt <= mark.createdAt)
        return { newer, base: version, newest, partial: false }
      newer.push(version)
    }
    cursor = got.cursor
    if (!cursor) return { newer, base: null, newest, partial: false }
  }
  return { newer, base: null, newest, partial: true }
}

export type SinceLastLook = {
  /** The notice (hidden until there is something to say); put it under the header. */
  readonly element: HTMLElement
  /** Reads what changed since the last look and shows the notice; then keeps the mark moving. */
  start(): Promise<void>
}

/**
 * @param review opens the history panel on `base` (or its oldest version when the last seen one is out
 *   of reach), showing the changes from it to now.
 */
export function sinceLastLook(slug: string, review: (base: Version | null) => void): SinceLastLook {
  const element = h('section', {
    class: 'banner info since-look',
    'aria-label': 'Changes since you last looked',
    hidden: true,
  })
  /** While a notice waits for an answer the mark stays put (leaving shows it again next time). */
  let waiting = false
  let timer: ReturnType<typeof setInterval> | undefined

  async function markNewest() {
    if (waiting || document.visibilityState !== 'visible') return
    try {
      const page = await fetchVersions(slug, null)
      if (!waiting) await writeMark(slug, page.versions[0])
    } catch {
      // Offline or signed out: the mark moves at the next try.
    }
  }

  function answer(newest: Version | undefined) {
    waiting = false
    element.hidden = true
    element.replaceChildren()
    void writeMark(slug, newest)
  }

  function show(found: ChangesSince) {
    const agents = new Map<string, string>()
    for (const version of found.newer)
      for (const author of version.authors)
        if (author.kind === 'agent') agents.set(agentText(author), agentText(author))
    if (agents.size === 0) return false
    const names = [...agents.values()]
    const named = names.slice(0, AGENTS_NAMED).join(', ')
    const more = names.length > AGENTS_NAMED ? ` and ${names.length - AGENTS_NAMED} more` : ''
    const count = found.partial ? `more than ${found.newer.length}` : String(found.newer.length)
    const versions = found.newer.length === 1 && !found.partial ? 'version' : 'versions'
    const reviewButton = h(
      'button',
      {
        type: 'button',
        onclick: () => {
          answer(found.newest)
          review(found.base ?? found.newer.at(-1) ?? null)
        },
      },
      'Review changes',
    )
    const dismiss = h('button', { type: 'button', onclick: () => answer(found.newest) }, 'Dismiss')
    element.replaceChildren(
      h('strong', {}, 'Since you last looked: '),
      `changed by ${named}${more} (${count} ${versions}). `,
      reviewButton,
      ' ',
      dismiss,
    )
    element.hidden = false
    waiting = true
    return true
  }

  return {
    element,
    async start() {
      try {
        const mark = await readMark(slug)
        if (!mark) await markNewest()
        else {
          const found = await changesSince(slug, mark)
          if (!show(found)) await writeMark(slug, found.newest)
        }
      } catch (error) {
        // The notice is optional: a refused or failed read (a viewer of a private copy, offline) shows nothing.
        if (!(error instanceof ApiError) && !(error instanceof TypeError)) throw error
      }
      // Decided (shown or not): tests and scripts wait for this rather than for the network to go quiet.
      element.dataset.checked = 'true'
      clearInterval(timer)
      timer = setInterval(() => void markNewest(), MARK_EVERY_MS)
      document.addEventListener('visibilitychange', () => void markNewest())
    },
  }
}
