/**
 * The Hocuspocus instance: authentication, persistence, and Redis when configured so several
 * server instances share live documents.
 */
import { type Extension, Hocuspocus } from '@hocuspocus/server'
import type { Logger } from '../logger.ts'
import type { Metrics } from '../metrics.ts'
import type { Services } from '../services.ts'
import { turnsWaiting } from '../turns.ts'
import { AccessWatch } from './access-watch.ts'
import { AuthExtension, type BrowserSession } from './auth-extension.ts'
import { AwarenessGuard } from './awareness-guard.ts'
import { EditorBoundary } from './boundary.ts'
import { UserInflow } from './flood.ts'
import { answerFromLoadedUpdates } from './persistence/loaded-updates.ts'
import { PersistenceExtension } from './persistence-extension.ts'
import type { RedisSync } from './redis-sync.ts'

/** How long shutdown waits for loaded documents to unload after their final store. */
const UNLOAD_WAIT_MS = 3_000

export type Collab = {
  hocuspocus: Hocuspocus
  persistence: PersistenceExtension
  /** The editor boundary (its per-user shares are read by tests). */
  boundary: EditorBoundary
  /** The awareness guard (what waits for a user's presence share is read by tests). */
  awareness: AwarenessGuard
  /** Bytes arriving per user across their sockets (server.ts draws each message from it). */
  inflow: UserInflow
  /** Stops taking in other instances' changes (shutdown, before its last flush); no-op without Redis. */
  stopReceiving(): void
  close(): Promise<void>
}

/** The settings collab runs with (config.ts reads them from the environment; these are its names). */
export type CollabSettings = {
  storeDebounceMs: number
  storeMaxDebounceMs: number
  /** redis://… : documents shared live with the other instances. */
  redisUrl: string | undefined
  storeCompactAfterUpdates?: number
  searchRefreshMs?: number
  liveMergeStructs?: number
  versionMinIntervalMs?: number
  versionPauseMs?: number
  versionAgentPauseMs?: number
}

export async function createCollab(deps: {
  config: CollabSettings
  services: Services
  /** Browsers signed in by cookie (the web editor): see AuthExtension. */
  session?: BrowserSession
  logger: Logger
  metrics: Metrics
}): Promise<Collab> {
  const { config, services, logger, metrics } = deps
  const persistence = new PersistenceExtension({
    documents: services.documents,
    logger,
    metrics,
    // With Redis, other instances log the same documents: compaction merges what they logged.
    mergeWithStored: Boolean(config.redisUrl),
    compactAfterUpdates: config.storeCompactAfterUpdates,
    searchRefreshMs: config.searchRefreshMs,
    liveMergeStructs: config.liveMergeStructs,
    versionTiming: {
      minIntervalMs: config.versionMinIntervalMs,
      pauseMs: config.versionPauseMs,
      agentPauseMs: config.versionAgentPauseMs,
    },
  })
  const boundary = new EditorBoundary({
    logger,
    metrics,
    stateBytes: (name) => persistence.stateBytes(name),
    answerSync: (document, vector, userId, address) =>
      answerFromLoadedUpdates(document, vector, userId, address, {
        updates: persistence.loadedUpdates,
        documents: services.documents,
        logger,
      }),
  })
  const awareness = new AwarenessGuard({ logger, metrics })
  const inflow = new UserInflow()
  const extensions: Extension[] = [
    new AuthExtension({
      tokens: services.tokens,
      documents: services.documents,
      logger,
      metrics,
      session: deps.session,
      inflow,
    }),
    persistence,
    // Every editor message is checked before it is applied or broadcast (schema, depth, sizes, heading ids).
    boundary,
    // Awareness: bounded states and clientIds per connection; names, agent badges and colours from the server.
    awareness,
    // Open connections follow revoke, unshare, read-only and role changes (from every instance with Redis).
    new AccessWatch({ services, logger, redisUrl: config.redisUrl }),
  ]
  let redisSync: RedisSync | undefined
  if (config.redisUrl) {
    // Imported only with Redis: the extension and its client are ~0.4 s of CPU a start without it skips.
    const { createRedisSync } = await import('./redis-sync.ts')
    redisSync = createRedisSync(config.redisUrl, logger)
    extensions.push(redisSync)
  }
  const hocuspocus = new Hocuspocus({
    name: 'collab',
    quiet: true,
    debounce: config.storeDebounceMs,
    maxDebounce: config.storeMaxDebounceMs,
    extensions,
  })
  metrics.addGauge('collab_websocket_connections', 'Open WebSocket connections.', () =>
    hocuspocus.getConnectionsCount(),
  )
  metrics.addGauge('collab_documents_loaded', 'Documents held in memory.', () =>
    hocuspocus.getDocumentsCount(),
  )
  metrics.addGauge(
    'collab_worker_jobs',
    "Jobs running or waiting on the documents' worker (imports, exports, whole reads, compactions, undo).",
    () => services.documents.workerJobs().long,
  )
  metrics.addGauge(
    'collab_worker_short_jobs',
    "Short jobs running or waiting on the documents' worker's short lane (sync answers, first screens).",
    () => services.documents.workerJobs().short,
  )
  metrics.addGauge(
    'collab_event_loop_turns_waiting',
    'Sliced jobs on the event loop waiting for their next turn (measuring, search walks, loads in parts, large reads and agent writes).',
    turnsWaiting,
  )
  metrics.addGauge('collab_documents_unstored', 'Loaded documents with changes not yet stored.', () =>
    persistence.pendingCount(),
  )
  return {
    hocuspocus,
    persistence,
    boundary,
    awareness,
    inflow,
    stopReceiving: () => redisSync?.stopReceiving(),
    async close() {
      // Documents unload shortly after their last store (the Redis extension delays it by a second);
      // closing Redis under them makes their unsubscribe fail, so let them go first, within a bound.
      const end = Date.now() + UNLOAD_WAIT_MS
      while (hocuspocus.getDocumentsCount() > 0 && Date.now() < end) await Bun.sleep(25)
      // onDestroy lets every extension release what it holds (the Redis extension closes its clients).
      await hocuspocus.hooks('onDestroy', { instance: hocuspocus }).catch((err: Error) => {
        logger.warn({ err: err.message }, 'closing collaboration extensions failed')
      })
    },
  }
}
