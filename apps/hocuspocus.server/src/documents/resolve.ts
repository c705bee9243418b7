/**
 * Which document a slug or room names for a principal, with access decided by access.ts, and a short
 * cache of the answers that found a readable document. Also the access of many (document, principal)
 * pairs at once, for re-checking open connections.
 */

import { ok, type Result } from '@collab/doc-schema'
import type { AccessChange, AccessChanges } from '../access-changes.ts'
import type { Principal } from '../auth/tokens.ts'
import { Prisma, type PrismaClient } from '../db/generated/client.ts'
import { storableText } from '../db/storable-text.ts'
import { type Access, decideAccess, readableBy } from './access.ts'
import { type DocumentRow, notFound, type Resolved } from './rows.ts'
import { SLUG_PATTERN } from './slug.ts'

/**
 * How long a resolution (a slug or room, for one user with one set of scopes) that found a readable
 * document is reused: its query was the largest fixed cost of a warm tool call on PGlite (~1-3 ms of a
 * ~5 ms call). Every access change (share, unshare, flags, delete, a user or token change, also from other
 * instances through Redis) drops every entry at once, and a title written for a document drops its entries,
 * so this bounds only changes made to the database behind the server's back. A refusal is never kept:
 * "not found" and "not yours" still cost one query alike, with the same answer from it.
 */
export const RESOLVE_CACHE_MS = 2_000
/**
 * A resolution older than this still answers, and is made again in the background, so a document in
 * steady use never lapses: at each lapse every call in flight for it missed at once and queued one query
 * each (on PGlite's one session 50 concurrent reads waited ~60-160 ms every ~2 s, the bench's p99).
 */
export const RESOLVE_REFRESH_AFTER_MS = 1_500

/** Resolutions kept at most; past it the oldest go first. */
export const MAX_RESOLVE_CACHE_ENTRIES = 5_000

type ResolveRow = { [K in keyof DocumentRow]: DocumentRow[K] | null } & { role: string | null }
const EMPTY_RESOLVE_ROW = { id: null, role: null } as unknown as ResolveRow
/** The membership probe's id when there is no document: no document has it (ids are random UUIDs). */
const NO_DOCUMENT_ID = '00000000-0000-0000-0000-000000000000'
/** Stands in for a missing or unreadable document so the access decision runs either way; it can never be read. */
const GHOST_DOCUMENT: DocumentRow = {
  id: '',
  room: '',
  slug: '',
  title: '',
  ownerId: '',
  isPrivate: true,
  readOnly: true,
  agentsSuggest: false,
  deletedAt: new Date(0),
  createdAt: new Date(0),
  updatedAt: new Date(0),
  contentUpdatedAt: new Date(0),
}

/** `changes`: told of every access change made here, and heard from for those made elsewhere. */
export function createResolver(prisma: PrismaClient, changes?: AccessChanges) {
  const resolutions = new Map<string, { value: Resolved; at: number }>()
  /** The query under way for a key: calls for the same key meanwhile share it (also refusals). */
  const flights = new Map<string, Promise<Result<Resolved>>>()
  /** Counts what dropped resolutions: a query that began before a drop must not cache what it read. */
  let drops = 0
  const dropAll = () => {
    drops++
    resolutions.clear()
    flights.clear()
  }
  changes?.on(dropAll)

  async function resolveWhere(
    where: { slug: string } | { room: string },
    principal: Principal,
    label: string,
  ): Promise<Result<Resolved>> {
    const key = `${'slug' in where ? `s${where.slug}` : `r${where.room}`}\u0000${principal.user.id}\u0000${principal.scopes.join(',')}`
    const cached = resolutions.get(key)
    const at = Date.now()
    if (cached && at - cached.at < RESOLVE_CACHE_MS) {
      if (at - cached.at >= RESOLVE_REFRESH_AFTER_MS && !flights.has(key))
        shared(key, where, principal, label).catch(() => {}) // a failure leaves the entry to lapse
      return ok(cached.value)
    }
    if (cached) resolutions.delete(key)
    return shared(key, where, principal, label)
  }

  /** The resolution of `key`, shared with a query already under way for it, cached if it found one. */
  function shared(
    key: string,
    where: { slug: string } | { room: string },
    principal: Principal,
    label: string,
  ): Promise<Result<Resolved>> {
    const flight = flights.get(key)
    if (flight) return flight
    const began = drops
    const answer = resolveUncached(where, principal, label)
      .then((resolved) => {
        if (drops !== began) return resolved
        if (resolved.kind !== 'ok') {
          resolutions.delete(key) // a renewal that finds no access any more: refused from now on
          return resolved
        }
        const now = Date.now()
        // Entries sit in the order they were made: expired ones go from the front, so the map holds about
        // the last RESOLVE_CACHE_MS of resolutions (1,000 cold reads of distinct documents left 1,000
        // entries behind for good), and forgetResolutions' walk stays short.
        resolutions.delete(key)
        for (const [oldKey, entry] of resolutions) {
          if (now - entry.at < RESOLVE_CACHE_MS && resolutions.size < MAX_RESOLVE_CACHE_ENTRIES) break
          resolutions.delete(oldKey)
        }
        resolutions.set(key, { value: resolved.value, at: now })
        return resolved
      })
      .finally(() => {
        if (flights.get(key) === answer) flights.delete(key)
      })
    flights.set(key, answer)
    return answer
  }

  async function resolveUncached(
    where: { slug: string } | { room: string },
    principal: Principal,
    label: string,
  ): Promise<Result<Resolved>> {
    // One statement of one shape whatever the answer, and one answer for everything the caller may not
    // read: the read rule (access.ts readableBy) is applied in the statement, so a private document of
    // someone else's, a deleted one and a missing slug all come back as the same row of nulls and take the
    // same steps after it (the ghost's decision, the refusal). Before, a private document's whole row came
    // back and was parsed and decided on, and its slug answered ~60 µs slower than a missing one (issue 24).
    // The membership is looked up in every case (a never-used id stands in for a missing document), so the
    // database does the same probes too; only the document's own row is read when there is one.
    const match = 'slug' in where ? Prisma.sql`d.slug = ${where.slug}` : Prisma.sql`d.room = ${where.room}`
    const userId = principal.user.id
    const rows = await prisma.$queryRaw<Array<ResolveRow>>`
      SELECT r.* FROM (SELECT 1) AS one LEFT JOIN (
        SELECT d.id::text AS id, d.room, d.slug, d.title, d.owner_id::text AS "ownerId",
               d.is_private AS "isPrivate", d.read_only AS "readOnly",
               d.agents_suggest AS "agentsSuggest", d.deleted_at AS "deletedAt",
               d.created_at AS "createdAt", d.updated_at AS "updatedAt",
               d.content_updated_at AS "contentUpdatedAt", m.role::text AS role
          FROM (SELECT 1) AS probe
          LEFT JOIN documents d ON ${match}
          LEFT JOIN document_members m
            ON m.document_id = COALESCE(d.id, ${NO_DOCUMENT_ID}::uuid) AND m.user_id = ${userId}::uuid
         WHERE ${readableBy(userId)}) AS r ON true`
    const { role, ...row } = rows[0] ?? EMPTY_RESOLVE_ROW
    const document = row.id === null ? GHOST_DOCUMENT : (row as DocumentRow)
    const access = decideAccess({
      document,
      userId,
      role: role === 'editor' || role === 'viewer' ? role : null,
      scopes: principal.scopes,
    })
    return access.canRead && row.id !== null ? ok({ document, access }) : notFound(label)
  }

  return {
    resolve: (slug: string, principal: Principal) =>
      SLUG_PATTERN.test(slug) ? resolveWhere({ slug }, principal, slug) : Promise.resolve(notFound(slug)),

    /**
     * For the WebSocket hook: providers open a document by its room name. A name the database could not
     * hold (NUL, lone surrogate) names no document and is not queried (a NUL made the query fail).
     */
    resolveRoom: (room: string, principal: Principal) =>
      storableText(room) === room
        ? resolveWhere({ room }, principal, room)
        : Promise.resolve(notFound(storableText(room))),

    /**
     * Access of each (document, principal) pair, decided by access.ts as `resolve` does, in one batch
     * (documents and the principals' memberships): for re-checking every open connection at once.
     */
    async accessMany(pairs: ReadonlyArray<{ documentId: string; principal: Principal }>): Promise<Access[]> {
      if (pairs.length === 0) return []
      const rows = await prisma.document.findMany({
        where: { id: { in: [...new Set(pairs.map((p) => p.documentId))] } },
        select: {
          id: true,
          ownerId: true,
          isPrivate: true,
          readOnly: true,
          deletedAt: true,
          members: {
            where: { userId: { in: [...new Set(pairs.map((p) => p.principal.user.id))] } },
            select: { userId: true, role: true },
          },
        },
      })
      const byId = new Map(rows.map((row) => [row.id, row]))
      return pairs.map(({ documentId, principal }): Access => {
        const row = byId.get(documentId)
        if (!row) return { canRead: false }
        const userId = principal.user.id
        const role = row.members.find((m) => m.userId === userId)?.role ?? null
        return decideAccess({ document: row, userId, role, scopes: principal.scopes })
      })
    },

    /** Who may do what changed here: cached resolutions go, and open connections are told. */
    accessChanged(change: AccessChange): void {
      dropAll()
      changes?.emit(change)
    },

    /** Drops the cached resolutions of one document (its title or flags changed here). */
    forgetResolutions(documentId: string): void {
      // A query under way may be for this document: none of them is cached, nor shared from now on.
      drops++
      flights.clear()
      for (const [key, entry] of resolutions)
        if (entry.value.document.id === documentId) resolutions.delete(key)
    },
  }
}

export type Resolver = ReturnType<typeof createResolver>
