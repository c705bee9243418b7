/**
 * The catalog of documents: creating one (from a title and Markdown, or from an imported file), listing
 * them, and what an administrator changes about one (members, flags, deletion). Every change of who may do
 * what is told through `accessChanged`.
 */
import { createDocumentUpdate, type OutlineNode, ok, type Result, refuse } from '@collab/doc-schema'
import type { AccessChange } from '../access-changes.ts'
import type { PrismaClient } from '../db/generated/client.ts'
import type { MemberRole } from '../db/generated/enums.ts'
import { storableText } from '../db/storable-text.ts'
import { CONTENT_TRANSACTION } from '../db/transactions.ts'
import { MAX_FIND_TEXT_CHARS } from '../limits.ts'
import { serverAuthor } from './history-authors.ts'
import { type DocumentListing, type DocumentRow, documentSelect, notFound } from './rows.ts'
import { newRoomName, slugBase, slugWithTail } from './slug.ts'
import { storeContent } from './store.ts'
import { derivedOf } from './stored-parts.ts'
import { titleTooLong } from './title.ts'
import type { WorkerPool } from './worker/pool.ts'

export function createCatalog(
  prisma: PrismaClient,
  deps: {
    /** Imports are built on the documents' worker. */
    jobs: WorkerPool
    /** Who may do what changed here (resolve.ts). */
    accessChanged: (change: AccessChange) => void
  },
) {
  const { jobs, accessChanged } = deps

  /** A new document row and its first stored state, in one transaction (a retry on a taken slug). */
  async function insertDocument(
    ownerId: string,
    title: string,
    state: Uint8Array,
    flags: { isPrivate?: boolean; readOnly?: boolean },
    derived: { text: string; outline?: OutlineNode[]; outlineJson?: string } = derivedOf(
      state,
      MAX_FIND_TEXT_CHARS,
    ),
    via: 'create' | 'import' = 'create',
  ): Promise<Result<DocumentRow>> {
    const { text, outline, outlineJson } = derived
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
          // The first version: the server wrote it for its owner (history-authors.ts).
          const owner = await tx.user.findUnique({ where: { id: ownerId }, select: { handle: true } })
          const author = serverAuthor(via, { id: ownerId, handle: owner?.handle })
          await storeContent(
            tx,
            created.id,
            { state, title, text, outline, outlineJson, authors: [author] },
            { version: { reason: via === 'create' ? 'created' : 'import' } },
          )
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
    bySlugForAdmin,

    async create(
      ownerId: string,
      input: { title: string; markdown?: string; isPrivate?: boolean; readOnly?: boolean },
    ): Promise<Result<DocumentRow>> {
      const title = storableText(input.title).trim()
      if (!title) return refuse('invalid_input', 'title: must not be empty', 'title')
      const tooLong = titleTooLong(title)
      if (tooLong) return tooLong
      const markdown = input.markdown === undefined ? undefined : storableText(input.markdown)
      const built = createDocumentUpdate(title, markdown)
      if (built.kind === 'error') return refuse('invalid_input', built.message, built.field)
      return insertDocument(ownerId, title, built.value, input)
    },

    /**
     * A document from a person's Markdown file (importMarkdown's mapping: title, headings, front matter,
     * HTML), built in memory and stored in one transaction: a refusal leaves nothing behind. Bytes (a
     * request's body, UTF-8) are given to the worker, not copied: the caller must not read them after.
     */
    async importMarkdown(
      ownerId: string,
      input: {
        markdown: string | Uint8Array
        title?: string
        fallbackTitle: string
        isPrivate?: boolean
        /** `markdown` is a REST import's JSON body, read on the worker: its `private` wins when given. */
        json?: true
      },
    ): Promise<Result<{ document: DocumentRow; changes: string[] }>> {
      const built = await jobs.build(ownerId, input, MAX_FIND_TEXT_CHARS)
      if (built.kind === 'error') return built
      const { title, state, text, outlineJson, changes, isPrivate } = built.value
      const flags = { isPrivate: isPrivate ?? input.isPrivate }
      const document = await insertDocument(ownerId, title, state, flags, { text, outlineJson }, 'import')
      if (document.kind === 'error') return document
      return ok({ document: document.value, changes })
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
      flags: { isPrivate?: boolean; readOnly?: boolean; agentsSuggest?: boolean },
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
  }
}
