/**
 * Who made a stored change (issue 27's attribution): a person in an editor, an agent through MCP (with the
 * app: an API token's name or an OAuth client's name), or the server itself (a document created or
 * imported). One entry per author and app, never per keystroke: a store's batch keeps the set of its
 * authors (document_updates.authors), compaction carries them into the document's next version
 * (document_states.unversioned_authors, then document_versions.authors).
 *
 * The live document only knows a principal (user and credential id) when an update arrives, and naming the
 * app needs a query: the update listener records the principal (`RawAuthor`, synchronous, a map set), and
 * the store resolves the names (`AppNames`, cached) just before it appends the batch.
 */
import { SESSION_PRINCIPAL_PREFIX } from '../auth/tokens.ts'

export type AuthorKind = 'person' | 'agent' | 'server'

/**
 * How the change came: `editor` (a signed-in browser), `token` (an API token), `oauth` (an OAuth app), or
 * what the server did: `create`, `import`.
 */
export type AuthorVia = 'editor' | 'token' | 'oauth' | 'create' | 'import'

/** One author of stored changes, as kept in the JSON columns (short keys: it is written with every store). */
export type Author = {
  k: AuthorKind
  /** The user (the person, the agent's user, or who asked the server). */
  u?: string
  /** The user's handle when the change was made. */
  h?: string
  v: AuthorVia
  /** The app's name (token label or OAuth client name) when the change was made; '' for an unnamed one. */
  a?: string
  /** The change was a restore of a version or a revert of changes (history-actions.ts). */
  x?: HistoryAction
}

/** What a history action's edit was. */
export type HistoryAction = 'restore' | 'revert'

/** An author as the live document sees it: the principal, the app not yet named. */
export type RawAuthor = {
  kind: AuthorKind
  userId: string
  handle: string
  credential: string
  action?: HistoryAction
}

/** Most authors one batch, one version or one state keeps; more are summed up as the count of the rest. */
export const MAX_AUTHORS_KEPT = 50

export function authorKey(author: Author): string {
  return `${author.k}|${author.u ?? ''}|${author.v}|${author.a ?? ''}${author.x ? `|${author.x}` : ''}`
}

/** The union of author lists, in first-seen order, at most MAX_AUTHORS_KEPT. */
export function unionAuthors(...lists: ReadonlyArray<readonly Author[] | null | undefined>): Author[] {
  const seen = new Map<string, Author>()
  for (const list of lists)
    for (const author of Array.isArray(list) ? list : []) {
      if (!isAuthor(author)) continue
      const key = authorKey(author)
      if (!seen.has(key) && seen.size < MAX_AUTHORS_KEPT) seen.set(key, author)
    }
  return [...seen.values()]
}

function isAuthor(value: unknown): value is Author {
  const author = value as Author
  return (
    typeof author === 'object' &&
    author !== null &&
    typeof author.k === 'string' &&
    typeof author.v === 'string'
  )
}

/** The principal behind a change as the persistence extension sees it in a transaction's origin. */
type OriginPrincipal = { user: { id: string; handle: string }; tokenId: string }

/**
 * The author of a transaction of the live document, from its Hocuspocus origin: a WebSocket connection's
 * principal is a person typing; a direct connection opened by an MCP write carries its principal (`mcp`);
 * anything else (another instance's change through Redis, which that instance attributes; the server's
 * heading-id repairs, part of the change they follow) names nobody.
 */
export function rawAuthorOf(origin: unknown): RawAuthor | null {
  if (typeof origin !== 'object' || origin === null) return null
  const source = (origin as { source?: unknown }).source
  if (source === 'connection') {
    const context = (origin as { connection?: { context?: { principal?: OriginPrincipal } } }).connection
      ?.context
    return context?.principal ? rawOf('person', context.principal) : null
  }
  if (source === 'local') {
    const context = (
      origin as {
        context?: {
          mcp?: { principal?: OriginPrincipal }
          history?: { principal?: OriginPrincipal; action?: HistoryAction }
        }
      }
    ).context
    const action = context?.history?.action
    const mcp = context?.mcp
    if (mcp?.principal) return rawOf('agent', mcp.principal, action)
    // A restore or revert asked through REST: a person in the browser, or an agent with an API token.
    const asked = context?.history?.principal
    if (!asked) return null
    return rawOf(credentialKind(asked.tokenId) === 'editor' ? 'person' : 'agent', asked, action)
  }
  return null
}

function rawOf(kind: AuthorKind, principal: OriginPrincipal, action?: HistoryAction): RawAuthor {
  return {
    kind,
    userId: principal.user.id,
    handle: principal.user.handle,
    credential: principal.tokenId,
    ...(action ? { action } : {}),
  }
}

export function rawAuthorKey(raw: RawAuthor): string {
  return `${raw.kind}|${raw.userId}|${raw.credential}${raw.action ? `|${raw.action}` : ''}`
}

/** How a credential id (Principal.tokenId) reaches us: a browser session, an OAuth grant, an API token. */
export function credentialKind(credential: string): 'editor' | 'oauth' | 'token' {
  if (credential.startsWith(SESSION_PRINCIPAL_PREFIX)) return 'editor'
  if (credential.startsWith('oauth:')) return 'oauth'
  return 'token'
}

/** The server acting for a user: a document created or imported (catalog.ts). */
export function serverAuthor(via: 'create' | 'import', user: { id: string; handle?: string }): Author {
  return { k: 'server', u: user.id, ...(user.handle ? { h: user.handle } : {}), v: via }
}

/** One author as people and agents read it: `alice (editor)`, `alice's agent via OAuth app "Claude"`. */
export function describeAuthor(author: Author): string {
  const base = describeBase(author)
  return author.x ? `${base}, ${author.x === 'restore' ? 'restoring a version' : 'reverting changes'}` : base
}

function describeBase(author: Author): string {
  const who = author.h ?? author.u ?? 'unknown user'
  const app = author.a ? `"${author.a}"` : 'an unnamed app'
  switch (author.v) {
    case 'editor':
      return `${who} (editor)`
    case 'token':
      return author.k === 'agent'
        ? `${who}'s agent via API token ${app}`
        : `${who} (editor via API token ${app})`
    case 'oauth':
      return author.k === 'agent'
        ? `${who}'s agent via OAuth app ${app}`
        : `${who} (editor via OAuth app ${app})`
    case 'create':
      return `server (created for ${who})`
    case 'import':
      return `server (imported for ${who})`
  }
  return who
}
