/**
 * Documents: the one service every transport uses, put together from its parts: which document a slug
 * or room names and who may do what with it (resolve.ts, deciding through access.ts), the catalog
 * (catalog.ts: create, import, list, share, flags, delete), exports (export-markdown.ts) and the stored
 * content (stored-content.ts). Imports, large exports and the edits of restores and reverts are worked out
 * on the documents' worker (worker/pool.ts).
 */
import type { AccessChanges } from '../access-changes.ts'
import type { PrismaClient } from '../db/generated/client.ts'
import { createCatalog } from './catalog.ts'
import { createStoredCompaction } from './compact-stored.ts'
import { createMarkdownExport } from './export-markdown.ts'
import { createHistory } from './history.ts'
import type { UndoInput } from './history-undo.ts'
import { createResolver } from './resolve.ts'
import { createStoredContent } from './stored-content.ts'
import { WorkerPool } from './worker/pool.ts'

/** `changes`: told of every share, unshare, flag change and delete, so open connections follow them. */
export function createDocumentsService(prisma: PrismaClient, changes?: AccessChanges) {
  /** Imports and large exports run on a worker thread (worker/pool.ts), one at a time, a share per user. */
  const jobs = new WorkerPool()
  const { accessChanged, forgetResolutions, ...resolver } = createResolver(prisma, changes)
  const catalog = createCatalog(prisma, { jobs, accessChanged })
  const stored = createStoredContent(prisma, { forgetResolutions })
  const exports = createMarkdownExport({
    jobs,
    loadStored: stored.loadStored,
    bySlugForAdmin: catalog.bySlugForAdmin,
  })
  return {
    ...resolver,
    ...catalog,
    ...exports,
    ...stored,
    ...createHistory(prisma, stored),
    ...createStoredCompaction(prisma, { jobs, forgetResolutions }),
    /** A restore's or revert's edit, worked out on the worker with `user`'s share (history-actions.ts). */
    planUndo(user: string, input: UndoInput) {
      return jobs.undo(user, input)
    },

    /** Ends the documents' worker (shutdown); imports and exports still running are refused. */
    close(): void {
      jobs.close()
    },
  }
}

export type DocumentsService = ReturnType<typeof createDocumentsService>
