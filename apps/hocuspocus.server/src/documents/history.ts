/**
 * A document's history as the services read it (issue 27; docs/history.md): its versions newest first,
 * one version found by id, time or section rev with its state, and everyone whose changes came after a
 * version. The SQL is history-store.ts; attribution is history-authors.ts (names of apps:
 * history-apps.ts); what changed between two states is history-diff.ts.
 */
import { readOutline } from '@collab/doc-schema'
import * as Y from 'yjs'
import type { PrismaClient } from '../db/generated/client.ts'
import { createAppNames } from './history-apps.ts'
import type { Author, RawAuthor } from './history-authors.ts'
import { diffFragments, fragmentOfState, summarize } from './history-diff.ts'
import {
  authorsAfter,
  countVersions,
  findVersion,
  findVersionState,
  listVersions,
  listVersionsCounted,
  newestVersion,
  newestVersionState,
  type VersionInfo,
  type VersionLookup,
  versionsAfter,
} from './history-store.ts'
import { recentStatesOf } from './recent-states.ts'
import { STATE_SLICE_BYTES } from './sliced-read.ts'
import type { StoredContent, StoreOptions } from './store.ts'

/** What a named version needs of the stored content (stored-content.ts). */
type StoredAccess = {
  loadState(room: string): Promise<{ documentId: string; state: Uint8Array | null } | null>
  storeState(
    documentId: string,
    content: StoredContent,
    options: StoreOptions,
  ): Promise<{ bytes: number; versionId?: bigint }>
}

export function createHistory(prisma: PrismaClient, stored: StoredAccess) {
  const appNames = createAppNames(prisma)
  const recent = recentStatesOf(prisma, STATE_SLICE_BYTES)
  return {
    /**
     * A version named on request, of the stored content (snapshot and log; what editors typed in the last
     * moments before their next store is not in it). Merged and written under the state row's lock as
     * every compaction is, so an instance holding the document live loses nothing. Null: gone.
     */
    async saveNamedVersion(room: string, name: string): Promise<{ id: bigint } | null> {
      const loaded = await stored.loadState(room)
      if (!loaded?.state) return null
      const state = loaded.state
      const fragment = fragmentOfState(state)
      const newest = await newestVersion(prisma, loaded.documentId)
      const before = fragmentOfState(newest?.state ?? null)
      try {
        const summary = summarize(diffFragments(before, fragment))
        const written = await stored.storeState(
          loaded.documentId,
          {
            state,
            vector: Y.encodeStateVectorFromUpdate(state),
            outline: readOutline(fragment),
            title: '',
            text: '',
          },
          {
            compact: true,
            mergeWithStored: true,
            keepDerived: true,
            version: { reason: 'named', name, summary },
          },
        )
        return written.versionId === undefined ? null : { id: written.versionId }
      } finally {
        before.doc?.destroy()
        fragment.doc?.destroy()
      }
    },
    /** The authors of a store's batch, their apps named (cached; a failed lookup leaves the name ''). */
    resolveAuthors(raws: Iterable<RawAuthor>): Promise<Author[]> {
      return appNames.resolve(raws)
    },
    listVersions(documentId: string, options: { before?: bigint; limit: number }): Promise<VersionInfo[]> {
      return listVersions(prisma, documentId, options)
    },
    /** A page of versions with the counts its notes need, read in one statement (listVersionsCounted). */
    listVersionsCounted(documentId: string, options: { before?: bigint; limit: number }) {
      return listVersionsCounted(prisma, documentId, options)
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
    versionsAfter(documentId: string, since: { afterId: bigint } | { from: Date }, limit: number) {
      return versionsAfter(prisma, documentId, since, limit)
    },
    newestVersion(documentId: string) {
      return newestVersion(prisma, documentId)
    },
    /** The version a lookup names, its state read in slices (for the documents' worker). */
    findVersionState(documentId: string, lookup: VersionLookup) {
      return findVersionState(prisma, documentId, lookup)
    },
    /** The newest version, its state read in slices (for the documents' worker). */
    newestVersionState(documentId: string) {
      return newestVersionState(prisma, documentId, undefined, recent)
    },
  }
}

export type History = ReturnType<typeof createHistory>
