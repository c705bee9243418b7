/**
 * REST for the web editor's history panel (issue 27; docs/history.md "REST"): a document's versions, one
 * version's Markdown, what changed from a version to now, and (write) restoring a version or reverting
 * changes. Mounted under /api by api.ts, behind the same bearer (an API token, or a signed-in browser's
 * session cookie: http/bearer.ts). Unknown and unreadable slugs answer 404 alike; GETs need read access,
 * POSTs write access (and, for a browser, our own origin). Every answer is bounded by a named constant
 * below, and says what it left out.
 *
 * Contract (JSON; errors are `{ error, message, field? }` as everywhere in /api):
 *
 *   GET  /api/documents/:slug/versions?cursor=<id>&limit=<1..50>
 *     → { versions: Version[], total, nextCursor: string | null }
 *       newest first; `nextCursor` is the `cursor` of the next (older) page, null on the last page.
 *       Version = { id: string, createdAt: ISO, kind: 'auto' | 'named', reason, name: string | null,
 *                   authors: Author[], summary: Summary | null, byteSize }
 *       reason = 'agent' | 'pause' | 'interval' | 'unload' | 'created' | 'import' | 'named'
 *       Author = { kind: 'person' | 'agent' | 'server', name: string, app?: string,
 *                  via: 'editor' | 'token' | 'oauth' | 'create' | 'import', action?: 'restore' | 'revert',
 *                  text: string }   (text: how to show it, e.g. `olive's agent via API token "ci-bot"`)
 *       Summary = { added, removed, changed, charsIn, charsOut, complete,
 *                   sections: [{ kind: 'added' | 'removed' | 'changed', sectionId, title }] }
 *                   (what changed since the version before it; `complete` false: more sections than listed)
 *
 *   GET  /api/documents/:slug/versions/:id
 *     → { version: Version, markdown: string, complete: boolean, note?: string }
 *       the version's content as Markdown, its first MAX_API_PREVIEW_CHARS characters (`complete` false
 *       and `note` say when it is cut). A version past HISTORY_INLINE_BYTES is rendered on the documents'
       worker with the caller's share of whole reads (429 `rate_limited` when it is spent).
 *
 *   GET  /api/documents/:slug/versions/:id/changes
 *     → { since: Version, authors: Author[], counts: { added, removed, changed, charsIn, charsOut },
 *         sections: Change[], complete: boolean, note?: string }
 *       from that version to the document now (the live document when it is open), as MCP changes_since
 *       computes it. Change = { kind, sectionId, title, charsIn, charsOut, compared: boolean,
 *       blocks: [{ op: '-' | '+', block: number, text: string }], blocksOmitted: number }.
 *       Block texts beyond MAX_API_CHANGES_CHARS in all are left out (`blocksOmitted`, `complete` false,
 *       `note`); `compared` false: the comparison's own ceiling was reached before that section.
 *
 *   POST /api/documents/:slug/versions/:id/restore            (no body)
 *     → { restored: id, beforeVersionId: string, changed: boolean }
 *       the content becomes the version's, as one edit on the live document (editors see it at once),
 *       attributed to the caller as a restore; `beforeVersionId` is a version of the document just before
 *       (restore it to undo this).
 *
 *   POST /api/documents/:slug/revert   { versionId?: string, sinceTime?: ISO, author?: string, app?: string }
 *     → { reverted: string[], beforeVersionId: string, changed: boolean }
 *       without author: undoes what version `versionId` changed; with author (a handle) and optionally app:
 *       that author's changes in the versions after `versionId`, or after the newest version taken at or
 *       before `sinceTime` (one of the two). Others' later changes stay. 409 `conflict`
 *       when someone changed since a block these changes touched: the message names the sections and blocks.
 *
 *   Refusals of the POSTs: 403 without write access, 404 unknown version, 400 a document or version over
 *   MAX_HISTORY_STATE_BYTES (2 MiB), 409 conflicts or versions that mix the author with others.
 */
import { documentMarkdownPrefix, type MarkdownPrefix, type SerializeOptions } from '@collab/doc-schema'
import { Hono } from 'hono'
import type * as Y from 'yjs'
import { z } from 'zod'
import type { Principal } from '../auth/tokens.ts'
import {
  type HistoryActionDeps,
  type LiveWrite,
  MAX_SINCE_TIME_CHARS,
  restoreVersion,
  revertAuthor,
  revertVersion,
  sinceTimeOf,
} from '../documents/history-actions.ts'
import { type Author, describeAuthor } from '../documents/history-authors.ts'
import { type ChangeSummary, fragmentOfState, type SectionChange } from '../documents/history-diff.ts'
import type { VersionInfo } from '../documents/history-store.ts'
import type { Resolved } from '../documents/rows.ts'
import { HISTORY_INLINE_BYTES, MAX_HISTORY_STATE_BYTES, MAX_LABEL_CHARS } from '../limits.ts'
import type { Services } from '../services.ts'
import type { AuthVariables } from './bearer.ts'
import { httpRefusal, refusalToHttp } from './refusal.ts'

/** Versions one page lists by default, and at most (`?limit=`). */
export const DEFAULT_API_VERSIONS = 20
export const MAX_API_VERSIONS = 50
/** Characters of a version's Markdown one preview answers. */
export const MAX_API_PREVIEW_CHARS = 200_000
/** Characters of block text one changes answer holds in all (sections past it keep their line, no blocks). */
export const MAX_API_CHANGES_CHARS = 200_000
/** A preview's Markdown: images and links as their sources. */
const PREVIEW_OPTIONS: SerializeOptions = { media: 'source' }

export type HistoryRouteDeps = {
  /** The live document of a room when this instance holds it (Hocuspocus), so "now" is what editors see. */
  live?: (room: string) => Y.Doc | undefined
  /** Applies an edit to the live document (the MCP module's writer); without it the POSTs answer 404. */
  write?: LiveWrite
  /** Stores the live document's unstored changes (the writer's storePending), before a "before" version. */
  storePending?: (room: string) => Promise<void>
}

const KIND_OF_MARK = { '+': 'added', '-': 'removed', '~': 'changed' } as const

export function presentAuthor(author: Author) {
  return {
    kind: author.k,
    name: author.h ?? author.u ?? '',
    ...(author.a !== undefined ? { app: author.a } : {}),
    via: author.v,
    text: describeAuthor(author),
  }
}

function presentSummary(summary: ChangeSummary | null) {
  if (!summary) return null
  const { added, removed, changed, charsIn, charsOut, complete } = summary
  return {
    added,
    removed,
    changed,
    charsIn,
    charsOut,
    complete,
    sections: summary.sections.map((s) => ({ kind: KIND_OF_MARK[s.k], sectionId: s.id, title: s.t })),
  }
}

export function presentVersion(version: VersionInfo) {
  return {
    id: String(version.id),
    createdAt: version.createdAt.toISOString(),
    kind: version.reason === 'named' ? 'named' : 'auto',
    reason: version.reason,
    name: version.name,
    authors: (Array.isArray(version.authors) ? version.authors : []).map(presentAuthor),
    summary: presentSummary(version.summary),
    byteSize: Number(version.byteSize),
  }
}

/** A version id from the path: a whole number. */
export function versionIdOf(raw: string, field = 'id'): bigint {
  if (!/^\d{1,18}$/.test(raw) || BigInt(raw) < 1n)
    throw httpRefusal('invalid_input', `${field}: a version id (a whole number; GET …/versions lists them)`, {
      field,
    })
  return BigInt(raw)
}

const revertSchema = z
  .object({
    versionId: z.union([z.string(), z.number().int()]).transform(String).optional(),
    sinceTime: z.string().max(MAX_SINCE_TIME_CHARS).optional(),
    author: z.string().trim().min(1).max(MAX_LABEL_CHARS).optional(),
    app: z.string().max(MAX_LABEL_CHARS).optional(),
  })
  .strict()
  .refine((v) => v.app === undefined || v.author !== undefined, {
    message: 'app only with author',
    path: ['app'],
  })
  .refine((v) => v.sinceTime === undefined || v.author !== undefined, {
    message:
      'sinceTime only with author (whose changes since then to undo); to undo one version send versionId',
    path: ['sinceTime'],
  })
  .refine((v) => (v.versionId === undefined) !== (v.sinceTime === undefined), {
    message: 'send versionId, or with author sinceTime (an ISO 8601 time), one of the two',
    path: ['versionId'],
  })

export function historyRoutes(services: Services, deps: HistoryRouteDeps = {}) {
  const routes = new Hono<{ Variables: AuthVariables }>()
  const documents = services.documents

  async function readable(slug: string, principal: Principal): Promise<Resolved> {
    const resolved = await documents.resolve(slug, principal)
    if (resolved.kind === 'error') throw refusalToHttp(resolved)
    return resolved.value
  }

  async function versionOf(resolved: Resolved, id: bigint) {
    const version = await documents.findVersion(resolved.document.id, { id })
    if (!version)
      throw httpRefusal(
        'not_found',
        `id: no version ${id} of "${resolved.document.slug}" is kept (older versions are thinned: docs/history.md); GET …/versions lists the versions kept`,
        { field: 'id' },
      )
    if (version.state.byteLength > MAX_HISTORY_STATE_BYTES)
      throw httpRefusal(
        'payload_too_large',
        `id: version ${id} holds ${version.state.byteLength} bytes, over the ${MAX_HISTORY_STATE_BYTES} this server previews or compares; export the document instead`,
        { field: 'id' },
      )
    return version
  }

  routes.get('/documents/:slug/versions', async (c) => {
    const resolved = await readable(c.req.param('slug'), c.get('principal'))
    const cursorRaw = c.req.query('cursor')
    const before = cursorRaw === undefined || cursorRaw === '' ? undefined : versionIdOf(cursorRaw, 'cursor')
    const limitRaw = c.req.query('limit')
    const limit = limitRaw === undefined ? DEFAULT_API_VERSIONS : Number(limitRaw)
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_API_VERSIONS)
      throw httpRefusal('invalid_input', `limit: a whole number from 1 to ${MAX_API_VERSIONS}`, {
        field: 'limit',
      })
    const id = resolved.document.id
    const { versions: rows, total } = await documents.listVersionsCounted(id, { before, limit: limit + 1 })
    const page = rows.slice(0, limit)
    return c.json({
      versions: page.map(presentVersion),
      total,
      nextCursor: rows.length > limit ? String(page.at(-1)!.id) : null,
    })
  })

  /**
   * The start of a version's Markdown for a preview: rendered here when its state is small
   * (HISTORY_INLINE_BYTES), else on the documents' worker with `user`'s share of whole reads, as a whole
   * read of stored content is: decoding and rendering a 2 MiB version here held the event loop ~60-100 ms.
   */
  async function previewOf(user: string, state: Uint8Array): Promise<MarkdownPrefix> {
    if (state.byteLength <= HISTORY_INLINE_BYTES) {
      const fragment = fragmentOfState(state)
      try {
        return documentMarkdownPrefix(fragment, MAX_API_PREVIEW_CHARS, PREVIEW_OPTIONS, true)
      } finally {
        fragment.doc?.destroy()
      }
    }
    const stored = { snapshot: state, updates: [] }
    const rendered = await documents.readPrefixOf(user, {
      stored,
      minChars: MAX_API_PREVIEW_CHARS,
      opts: PREVIEW_OPTIONS,
    })
    if (rendered.kind === 'error') throw refusalToHttp(rendered)
    return rendered.value
  }

  routes.get('/documents/:slug/versions/:id', async (c) => {
    const principal = c.get('principal')
    const resolved = await readable(c.req.param('slug'), principal)
    const { state, ...info } = await versionOf(resolved, versionIdOf(c.req.param('id')))
    const prefix = await previewOf(principal.user.id, state)
    const cut = !prefix.complete || prefix.text.length > MAX_API_PREVIEW_CHARS
    const markdown = cut ? prefix.text.slice(0, MAX_API_PREVIEW_CHARS) : prefix.text
    return c.json({
      version: presentVersion(info),
      markdown,
      complete: !cut,
      ...(cut
        ? {
            note: `The preview shows the first ${markdown.length} characters of this version (at most ${MAX_API_PREVIEW_CHARS}${prefix.byWork ? ', and its markup reached the render ceiling' : ''}); restore it to read all of it.`,
          }
        : {}),
    })
  })

  routes.get('/documents/:slug/versions/:id/changes', async (c) => {
    const resolved = await readable(c.req.param('slug'), c.get('principal'))
    const version = await versionOf(resolved, versionIdOf(c.req.param('id')))
    const { state, ...info } = version
    // Compared on the documents' worker when either side is large (documents/service.ts `changesSince`).
    const room = resolved.document.room
    const compared = await documents.changesSince(c.get('principal').user.id, room, state, deps.live?.(room))
    if (!compared)
      throw httpRefusal('not_found', `slug: "${resolved.document.slug}" was deleted`, { field: 'slug' })
    if (compared.kind === 'error') throw refusalToHttp(compared)
    const changes: SectionChange[] = compared.value
    const authors = await documents.authorsAfter(resolved.document.id, version.id)
    let left = MAX_API_CHANGES_CHARS
    let omitted = 0
    const sections = changes.map((change) => {
      const blocks: typeof change.blocks = []
      let blocksOmitted = 0
      for (const block of change.blocks) {
        if (block.text.length <= left) {
          blocks.push(block)
          left -= block.text.length
        } else {
          left = 0
          blocksOmitted++
        }
      }
      omitted += blocksOmitted
      const { kind, sectionId, title, charsIn, charsOut, compared } = change
      return { kind, sectionId, title, charsIn, charsOut, compared, blocks, blocksOmitted }
    })
    const sum = (key: 'charsIn' | 'charsOut') => changes.reduce((total, change) => total + change[key], 0)
    const count = (kind: string) => changes.filter((change) => change.kind === kind).length
    return c.json({
      since: presentVersion(info),
      authors: authors.map(presentAuthor),
      counts: {
        added: count('added'),
        removed: count('removed'),
        changed: count('changed'),
        charsIn: sum('charsIn'),
        charsOut: sum('charsOut'),
      },
      sections,
      complete: omitted === 0,
      ...(omitted > 0
        ? {
            note: `${omitted} changed blocks are left out (this answer holds at most ${MAX_API_CHANGES_CHARS} characters of block text); the MCP tool changes_since pages through all of them.`,
          }
        : {}),
    })
  })

  async function writable(slug: string, principal: Principal): Promise<Resolved> {
    const resolved = await readable(slug, principal)
    if (!resolved.access.canWrite)
      throw httpRefusal(
        'forbidden',
        principal.scopes.includes('write')
          ? `${slug}: restoring or reverting needs write access (ask its owner to make you an editor)`
          : 'token: it has no write scope; issue one with --scope read,write',
      )
    return resolved
  }

  function actionDeps(): HistoryActionDeps {
    const write = deps.write
    if (!write) throw httpRefusal('not_found', 'history: restore and revert are not served here')
    return {
      history: {
        // Read in slices, decoded on the documents' worker (documents/sliced-read.ts).
        findVersion: (documentId, lookup) => documents.findVersionState(documentId, lookup),
        versionsAfter: (documentId, since, limit) => documents.versionsAfter(documentId, since, limit),
      },
      write,
      planUndo: (user, input) => documents.planUndo(user, input),
      async saveBefore(user, document, name, known) {
        await deps.storePending?.(document.room)
        return documents.saveBeforeVersion(user, document, name, known)
      },
    }
  }

  const actorOf = (principal: Principal) => ({ user: principal.user.id, context: { history: { principal } } })

  routes.post('/documents/:slug/versions/:id/restore', async (c) => {
    const principal = c.get('principal')
    const resolved = await writable(c.req.param('slug'), principal)
    const id = versionIdOf(c.req.param('id'))
    const done = await restoreVersion(actionDeps(), resolved.document, id, actorOf(principal), 'id')
    if (done.kind === 'error') throw refusalToHttp(done)
    return c.json({
      restored: String(id),
      beforeVersionId: String(done.value.beforeVersionId),
      changed: done.value.changed,
    })
  })

  routes.post('/documents/:slug/revert', async (c) => {
    const principal = c.get('principal')
    const resolved = await writable(c.req.param('slug'), principal)
    const body = revertSchema.safeParse(await c.req.json().catch(() => null))
    if (!body.success) {
      const issue = body.error.issues[0]
      const field = issue?.path.map(String).join('.') || 'body'
      throw httpRefusal(
        'invalid_input',
        `${field}: ${issue?.message ?? 'invalid'}; send {"versionId"} or {"author", "app"?, "versionId" or "sinceTime"}`,
        { field },
      )
    }
    const { versionId, sinceTime, author, app } = body.data
    const id = versionId === undefined ? undefined : versionIdOf(versionId, 'versionId')
    const at = sinceTime === undefined ? undefined : sinceTimeOf(sinceTime, 'sinceTime')
    if (at?.kind === 'error') throw refusalToHttp(at)
    // The schema holds exactly one of the two (no version 0 exists), and sinceTime only with author.
    const since = at ? { at: at.value } : { versionId: id ?? 0n }
    const done =
      author === undefined
        ? await revertVersion(actionDeps(), resolved.document, id ?? 0n, actorOf(principal), 'versionId')
        : await revertAuthor(
            actionDeps(),
            resolved.document,
            { handle: author.replace(/^@/, ''), ...(app !== undefined ? { app } : {}) },
            since,
            actorOf(principal),
          )
    if (done.kind === 'error') throw refusalToHttp(done)
    return c.json({
      reverted: done.value.reverted.map(String),
      beforeVersionId: String(done.value.beforeVersionId),
      changed: done.value.changed,
    })
  })

  return routes
}
