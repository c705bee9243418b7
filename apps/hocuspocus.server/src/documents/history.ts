/**
 * A document's history as the services read it (issue 27; docs/history.md): its versions newest first,
 * one version found by id, time or section rev with its state, and everyone whose changes came after a
 * version. The SQL is history-store.ts; attribution is history-authors.ts (names of apps:
 * history-apps.ts); what changed between two states is history-diff.ts.
 */
import type { PrismaClient } from '../db/generated/client.ts'
import { createAppNames } from './history-apps.ts'
import type { Author, RawAuthor } from './history-authors.ts'
import {
  authorsAfter,
  countVersions,
  findVersion,
  listVersions,
  newestVersion,
  type VersionInfo,
  type VersionLookup,
} from './history-store.ts'

export function createHistory(prisma: PrismaClient) {
  const appNames = createAppNames(prisma)
  return {
    /** The authors of a store's batch, their apps named (cached; a failed lookup leaves the name ''). */
    resolveAuthors(raws: Iterable<RawAuthor>): Promise<Author[]> {
      return appNames.resolve(raws)
    },
    listVersions(documentId: string, options: { before?: bigint; limit: number }): Promise<VersionInfo[]> {
      return listVersions(prisma, documentId, options)
    },
    countVersions(documentId: string, options: { from?: bigint } = {}): Promise<number> {
      return countVersions(prisma, documentId, options)
    },
    findVersion(documentId: string, lookup: VersionLookup) {
      return findVersion(prisma, documentId, lookup)
    },
    authorsAfter(documentId: string, afterId: bigint): Promise<Author[]> {
      return authorsAfter(prisma, documentId, afterId)
    },
    newestVersion(documentId: string) {
      return newestVersion(prisma, documentId)
    },
  }
}

export type History = ReturnType<typeof createHistory>
