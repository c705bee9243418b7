/**
 * Documents: creation, lookup with access decided in one place, sharing, and the stored Yjs state.
 * "No access" and "not found" return the same refusal, so nothing leaks which slugs exist.
 */
import {
  createDocumentUpdate,
  MAX_TITLE_CHARS,
  type OutlineNode,
  withWellFormedIds,
} from '@collab/doc-schema'
import * as Y from 'yjs'
import type { AccessChange, AccessChanges } from '../access-changes.ts'
import type { Principal } from '../auth/tokens.ts'
import { Prisma, type PrismaClient } from '../db/generated/client.ts'
import type { MemberRole } from '../db/generated/enums.ts'
import { storableText } from '../db/storable-text.ts'
import { CONTENT_TRANSACTION } from '../db/transactions.ts'
import { ok, type Result, refuse } from '../errors.ts'
import { type Access, decideAccess, type Whose } from './access.ts'
import { MAX_FIND_TEXT_CHARS } from './search.ts'
import { newRoomName, SLUG_PATTERN, slugBase, slugWithTail } from './slug.ts'
import {
  appendUpdate,
  type DerivedContent,
  type StoredContent,
  type StoreOptions,
  storeContent,
  writeDerived,
} from './store.ts'
import { applyStored, derivedOf, type StoredParts } from './stored-parts.ts'
import { renderExport } from './worker/export.ts'
import { WorkerPool } from './worker/pool.ts'

export { applyStored, type StoredParts }

export type DocumentRow = {
  id: string
  room: string
  slug: string
  title: string
  ownerId: string
  isPrivate: boolean
  readOnly: boolean
  deletedAt: Date | null
  createdAt: Date
  updatedAt: Date
  contentUpdatedAt: Date
}

export type Resolved = { document: DocumentRow; access: Extract<Access, { canRead: true }> }

export type DocumentListing = DocumentRow & { whose: Whose; ownerHandle: string }

const documentSelect = {
  id: true,
  room: true,
  slug: true,
  title: true,
  ownerId: true,
  isPrivate: true,
  readOnly: true,
  deletedAt: true,
  createdAt: true,
  updatedAt: true,
  contentUpdatedAt: true,
} as const

type ResolveRow = { [K in keyof DocumentRow]: DocumentRow[K] | null } & { role: string | null }
const EMPTY_RESOLVE_ROW = { id: null, role: null } as unknown as ResolveRow
/** Stands in for a missing document so the access decision runs either way; it can never be read. */
const GHOST_DOCUMENT: DocumentRow = {
  id: '',
  room: '',
  slug: '',
  title: '',
  ownerId: '',
  isPrivate: true,
  readOnly: true,
  deletedAt: new Date(0),
  createdAt: new Date(0),
  updatedAt: new Date(0),
  contentUpdatedAt: new Date(0),
}

export function notFound(slug: string): Result<never> {
  return refuse(
    'not_found',
    `slug: no document "${slug}" that you can open; list yours with find_documents or GET /api/documents`,
    'slug',
  )
}

/**
 * Stored bytes (snapshot and log) up to which an export is rendered on the event loop: ~10-30 ms of work,
 * less than a round trip through the worker's queue, which may be behind a large import. Larger documents
 * are rendered on the worker (a 22 MB state took seconds).
 */
export const EXPORT_INLINE_BYTES = 256 * 1024

/**
 * How long a resolution (a slug or room, for one user with one set of scopes) that found a readable
 * document is reused: its query was the largest fixed cost of a warm tool call on PGlite (~1-3 ms of a
 * ~5 ms call). Every access change (share, unshare, flags, delete, a user or token change, also from other
 * instances through Redis) drops every entry at once, and a title written for a document drops its entries,
 * so this bounds only changes made to the database behind the server's back. A refusal is never kept:
 * "not found" and "not yours" still cost one query alike.
 */
export const RESOLVE_CACHE_MS = 2_000

/** Resolutions kept at most; past it the oldest go first. */
export const MAX_RESOLVE_CACHE_ENTRIES = 5_000

/** `changes`: told of every share, unshare, flag change and delete, so open connections follow them. */
export function createDocumentsService(prisma: PrismaClient, changes?: AccessChanges) {
  /** Imports and large exports run on a worker thread (worker/pool.ts), one at a time, a share per user. */
  const jobs = new WorkerPool()
  const resolutions = new Map<string, { value: Resolved; at: number }>()
  changes?.on(() => resolutions.clear())
  /** Who may do what changed here: cached resolutions go, and open connections are told. */
  function accessChanged(change: AccessChange): void {
    resolutions.clear()
    changes?.emit(change)
  }
  /** Drops the cached resolutions of one document (its title or flags changed here). */
  function forgetResolutions(documentId: string): void {
    for (const [key, entry] of resolutions)
      if (entry.value.document.id === documentId) resolutions.delete(key)
  }

  async function resolveWhere(
    where: { slug: string } | { room: string },
    principal: Principal,
    label: string,
  ): Promise<Result<Resolved>> {
    const key = `${'slug' in where ? `s${where.slug}` : `r${where.room}`}\u0000${principal.user.id}\u0000${principal.scopes.join(',')}`
    const cached = resolutions.get(key)
    if (cached && Date.now() - cached.at < RESOLVE_CACHE_MS) return ok(cached.value)
    if (cached) resolutions.delete(key)
    const resolved = await resolveUncached(where, principal, label)
    if (resolved.kind === 'ok') {
      const now = Date.now()
      // Entries sit in the order they were made: expired ones go from the front, so the map holds about
      // the last RESOLVE_CACHE_MS of resolutions (1,000 cold reads of distinct documents left 1,000
      // entries behind for good), and forgetResolutions' walk stays short.
      for (const [oldKey, entry] of resolutions) {
        if (now - entry.at < RESOLVE_CACHE_MS && resolutions.size < MAX_RESOLVE_CACHE_ENTRIES) break
        resolutions.delete(oldKey)
      }
      resolutions.set(key, { value: resolved.value, at: now })
    }
    return resolved
  }

  async function resolveUncached(
    where: { slug: string } | { room: string },
    principal: Principal,
    label: string,
  ): Promise<Result<Resolved>> {
    // One statement of one shape whatever the answer: it always returns exactly one row (all null when
    // there is no such document), so "not found" and "not yours" cost the same work and answer alike.
    // (Prisma's findUnique with the membership runs a second query only when the document exists.)
    const match = 'slug' in where ? Prisma.sql`d.slug = ${where.slug}` : Prisma.sql`d.room = ${where.room}`
    const rows = await prisma.$queryRaw<Array<ResolveRow>>`
      SELECT d.id::text AS id, d.room, d.slug, d.title, d.owner_id::text AS "ownerId",
             d.is_private AS "isPrivate", d.read_only AS "readOnly", d.deleted_at AS "deletedAt",
             d.created_at AS "createdAt", d.updated_at AS "updatedAt",
             d.content_updated_at AS "contentUpdatedAt", m.role::text AS role
        FROM (SELECT 1) AS one
        LEFT JOIN documents d ON ${match}
        LEFT JOIN document_members m ON m.document_id = d.id AND m.user_id = ${principal.user.id}::uuid`
    const { role, ...row } = rows[0] ?? EMPTY_RESOLVE_ROW
    const document = row.id === null ? GHOST_DOCUMENT : (row as DocumentRow)
    const access = decideAccess({
      document,
      userId: principal.user.id,
      role: role === 'editor' || role === 'viewer' ? role : null,
      scopes: principal.scopes,
    })
    return access.canRead && row.id !== null ? ok({ document, access }) : notFound(label)
  }

  /** A new document row and its first stored state, in one transaction (a retry on a taken slug). */
  async function insertDocument(
    ownerId: string,
    title: string,
    state: Uint8Array,
    flags: { isPrivate?: boolean; readOnly?: boolean },
    derived: { text: string; outline: OutlineNode[] } = derivedOf(state, MAX_FIND_TEXT_CHARS),
  ): Promise<Result<DocumentRow>> {
    const { text, outline } = derived
    const base = slugBase(title)
    for (let attempt = 0; attempt < 5; attempt++) {
      const slug = slugWithTail(base) // always a tail: the slug says nothing about other documents
      try {
        const document = await prisma.$transaction(async (tx) => {
          const created = await tx.document.create({
            data: {
              room: newRoomName(),
              slug,
              title,
              ownerId,
              isPrivate: flags.isPrivate ?? true,
              readOnly: flags.readOnly ?? false,
            },
            select: documentSelect,
          })
          await storeContent(tx, created.id, { state, title, text, outline })
          return created
        }, CONTENT_TRANSACTION)
        return ok(document)
      } catch (error) {
        if ((error as { code?: string }).code === 'P2002') continue // slug taken: retry with another tail
        throw error
      }
    }
    return refuse('conflict', 'title: could not find a free slug; try a different title', 'title')
  }

  async function bySlugForAdmin(slug: string): Promise<Result<DocumentRow>> {
    const row = await prisma.document.findUnique({
      where: { slug: storableText(slug).trim() },
      select: documentSelect,
    })
    return row && !row.deletedAt ? ok(row) : notFound(slug)
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

    bySlugForAdmin,

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

    async create(
      ownerId: string,
      input: { title: string; markdown?: string; isPrivate?: boolean; readOnly?: boolean },
    ): Promise<Result<DocumentRow>> {
      const title = storableText(input.title).trim()
      if (!title) return refuse('invalid_input', 'title: must not be empty', 'title')
      if (title.length > MAX_TITLE_CHARS) {
        return refuse(
          'invalid_input',
          `title: ${title.length} characters; at most ${MAX_TITLE_CHARS}`,
          'title',
        )
      }
      const markdown = input.markdown === undefined ? undefined : storableText(input.markdown)
      const built = createDocumentUpdate(title, markdown)
      if (built.kind === 'error') return refuse('invalid_input', built.message, built.field)
      return insertDocument(ownerId, title, built.value, input)
    },

    /**
     * A document from a person's Markdown file (importMarkdown's mapping: title, headings, front matter,
     * HTML), built in memory and stored in one transaction: a refusal leaves nothing behind.
     */
    async importMarkdown(
      ownerId: string,
      input: { markdown: string; title?: string; fallbackTitle: string; isPrivate?: boolean },
    ): Promise<Result<{ document: DocumentRow; changes: string[] }>> {
      const built = await jobs.build(ownerId, input, MAX_FIND_TEXT_CHARS)
      if (built.kind === 'error') return built
      const { title, state, text, outline, changes } = built.value
      const document = await insertDocument(ownerId, title, state, input, { text, outline })
      if (document.kind === 'error') return document
      return ok({ document: document.value, changes })
    },

    /** Ends the documents' worker (shutdown); imports and exports still running are refused. */
    close(): void {
      jobs.close()
    },

    /** Documents the user owns or is a member of, most recently changed first. */
    async listForUser(userId: string): Promise<DocumentListing[]> {
      const rows = await prisma.document.findMany({
        where: { deletedAt: null, OR: [{ ownerId: userId }, { members: { some: { userId } } }] },
        select: { ...documentSelect, owner: { select: { handle: true } } },
        orderBy: [{ contentUpdatedAt: 'desc' }, { slug: 'asc' }],
      })
      return rows.map(({ owner, ...row }) => ({
        ...row,
        ownerHandle: owner.handle,
        whose: row.ownerId === userId ? 'yours' : 'shared with you',
      }))
    },

    /** Every live document, for the CLI (an administrator on the machine). */
    async listAll(ownerId?: string): Promise<DocumentListing[]> {
      const rows = await prisma.document.findMany({
        where: { deletedAt: null, ...(ownerId ? { ownerId } : {}) },
        select: { ...documentSelect, owner: { select: { handle: true } } },
        orderBy: [{ contentUpdatedAt: 'desc' }, { slug: 'asc' }],
      })
      return rows.map(({ owner, ...row }) => ({ ...row, ownerHandle: owner.handle, whose: 'yours' as const }))
    },

    async share(slug: string, userId: string, role: MemberRole): Promise<Result<DocumentRow>> {
      const doc = await bySlugForAdmin(slug)
      if (doc.kind === 'error') return doc
      if (doc.value.ownerId === userId)
        return refuse('invalid_input', 'HANDLE: that user owns the document already', 'HANDLE')
      await prisma.documentMember.upsert({
        where: { documentId_userId: { documentId: doc.value.id, userId } },
        create: { documentId: doc.value.id, userId, role },
        update: { role },
      })
      await prisma.document.update({ where: { id: doc.value.id }, data: { updatedAt: new Date() } })
      accessChanged({ kind: 'document', documentId: doc.value.id, userId })
      return doc
    },

    async unshare(slug: string, userId: string): Promise<Result<{ removed: boolean }>> {
      const doc = await bySlugForAdmin(slug)
      if (doc.kind === 'error') return doc
      const { count } = await prisma.documentMember.deleteMany({
        where: { documentId: doc.value.id, userId },
      })
      accessChanged({ kind: 'document', documentId: doc.value.id, userId })
      return ok({ removed: count > 0 })
    },

    async setFlags(
      slug: string,
      flags: { isPrivate?: boolean; readOnly?: boolean },
    ): Promise<Result<DocumentRow>> {
      const doc = await bySlugForAdmin(slug)
      if (doc.kind === 'error') return doc
      const updated = await prisma.document.update({
        where: { id: doc.value.id },
        data: flags,
        select: documentSelect,
      })
      accessChanged({ kind: 'document', documentId: updated.id })
      return ok(updated)
    },

    async softDelete(slug: string): Promise<Result<DocumentRow>> {
      const doc = await bySlugForAdmin(slug)
      if (doc.kind === 'error') return doc
      const deleted = await prisma.document.update({
        where: { id: doc.value.id },
        data: { deletedAt: new Date() },
        select: documentSelect,
      })
      accessChanged({ kind: 'document', documentId: deleted.id })
      return ok(deleted)
    },

    /** The latest stored Yjs state of a live (not deleted) document, or null. */
    /**
     * The whole stored document as Markdown, its title first as `# ` (an export: a running server stores
     * edits within its debounce, so the last seconds of typing may not be in it yet).
     */
    async markdownOf(
      document: Pick<DocumentRow, 'room' | 'slug'>,
      /** Who asks (a user id; the CLI is 'admin'): their share of the worker for a large document. */
      requester = 'admin',
    ): Promise<Result<string>> {
      const loaded = await this.loadStored(document.room)
      if (!loaded) return notFound(document.slug)
      const bytes = (loaded.snapshot?.byteLength ?? 0) + loaded.updateBytes
      if (bytes <= EXPORT_INLINE_BYTES) return ok(renderExport(loaded))
      return jobs.render(requester, loaded)
    },

    /** markdownOf by slug, for the CLI (an administrator on the machine). */
    async markdownForAdmin(slug: string): Promise<Result<string>> {
      const document = await bySlugForAdmin(slug)
      if (document.kind === 'error') return document
      return this.markdownOf(document.value)
    },

    /**
     * The stored content as it is kept: the snapshot and the update log after it, in order (apply the
     * snapshot, then each update). Null when the document is gone. One query; bytes travel as base64 text:
     * reading a bytea through PGlite cost ~140 ms per MiB, base64 ~15 ms (the store step does the same).
     */
    async loadStored(room: string): Promise<StoredParts | null> {
      if (storableText(room) !== room) return null // no room is named so (see resolveRoom)
      const rows = await prisma.$queryRaw<
        Array<{ id: string; deleted: boolean; state: string | null; updates: string[] | null }>
      >`
        SELECT d.id::text AS id, d.deleted_at IS NOT NULL AS deleted, encode(s.state, 'base64') AS state,
               (SELECT array_agg(encode(u."update", 'base64') ORDER BY u.id)
                  FROM document_updates u WHERE u.document_id = d.id) AS updates
          FROM documents d LEFT JOIN document_states s ON s.document_id = d.id
         WHERE d.room = ${room}`
      const row = rows[0]
      if (!row || row.deleted) return null
      const updates = (row.updates ?? []).map((b64) => new Uint8Array(Buffer.from(b64, 'base64')))
      return {
        documentId: row.id,
        snapshot: row.state === null ? null : new Uint8Array(Buffer.from(row.state, 'base64')),
        updates,
        updateBytes: updates.reduce((sum, update) => sum + update.byteLength, 0),
      }
    },

    /** The latest stored Yjs state (snapshot and log merged into one update), or null when gone. */
    async loadState(room: string): Promise<{ documentId: string; state: Uint8Array | null } | null> {
      const stored = await this.loadStored(room)
      if (!stored) return null
      const parts = [stored.snapshot, ...stored.updates].filter((p): p is Uint8Array => p !== null)
      const state =
        parts.length === 0 ? null : parts.length === 1 ? (parts[0] as Uint8Array) : Y.mergeUpdates(parts)
      return { documentId: stored.documentId, state }
    },

    /**
     * The outline stored with the document's state, without reading the state: null when the document is
     * gone; `outline` null when none was stored (then decode the state).
     */
    async loadOutline(room: string): Promise<{ documentId: string; outline: OutlineNode[] | null } | null> {
      if (storableText(room) !== room) return null // no room is named so (see resolveRoom)
      const rows = await prisma.$queryRaw<
        Array<{
          id: string
          deleted: boolean
          outline: OutlineNode[] | null
          hasState: boolean
          logged: boolean
        }>
      >`
        SELECT d.id::text AS id, d.deleted_at IS NOT NULL AS deleted, s.outline,
               s.document_id IS NOT NULL AS "hasState",
               EXISTS (SELECT 1 FROM document_updates u WHERE u.document_id = d.id) AS logged
          FROM documents d LEFT JOIN document_states s ON s.document_id = d.id
         WHERE d.room = ${room}`
      const row = rows[0]
      if (!row || row.deleted) return null
      // The stored outline describes the snapshot: with updates logged after it, it may be stale (null:
      // decode the content). No state at all is an empty document, whose outline is empty.
      // Stored before ids were checked, an outline may hold a forged id: never hand one out.
      if (row.logged) return { documentId: row.id, outline: null }
      const outline = row.hasState ? row.outline && withWellFormedIds(row.outline) : []
      return { documentId: row.id, outline }
    },

    /**
     * Stores a document's whole state with its title, search text and outline (compaction, with
     * `compact`: the log rows it covers are deleted). Returns the bytes stored. Throws when the database does.
     */
    async storeState(
      documentId: string,
      content: StoredContent,
      options: StoreOptions = {},
    ): Promise<{ bytes: number }> {
      const stored = await prisma.$transaction(
        (tx) => storeContent(tx, documentId, content, options),
        CONTENT_TRANSACTION,
      )
      forgetResolutions(documentId) // the title may have changed
      return stored
    },

    /** Appends one Yjs update to the document's log (a store). Throws when the database does. */
    async appendUpdate(documentId: string, update: Uint8Array): Promise<void> {
      await appendUpdate(prisma, documentId, update)
    },

    /** Writes the title and full-text vector derived from the live content. */
    async refreshDerived(documentId: string, content: DerivedContent): Promise<void> {
      await writeDerived(prisma, documentId, content)
      forgetResolutions(documentId) // the title may have changed
    },
  }
}

export type DocumentsService = ReturnType<typeof createDocumentsService>
