/**
 * The Hocuspocus instance: authentication, persistence, and Redis when configured so several
 * server instances share live documents.
 */
import { Redis as RedisExtension } from '@hocuspocus/extension-redis'
import { type Extension, Hocuspocus, OutgoingMessage } from '@hocuspocus/server'
import IORedis from 'ioredis'
import type { Logger } from '../logger.ts'
import type { Metrics } from '../metrics.ts'
import type { Services } from '../services.ts'
import { AccessWatch } from './access-watch.ts'
import { AuthExtension, type BrowserSession } from './auth-extension.ts'
import { AwarenessGuard } from './awareness-guard.ts'
import { EditorBoundary } from './boundary.ts'
import { PersistenceExtension } from './persistence-extension.ts'

/** How long shutdown waits for loaded documents to unload after their final store. */
const UNLOAD_WAIT_MS = 3_000

/**
 * The Redis extension as the documents' message bus only, without its two store hooks. Found by the load
 * and soak run (two instances, MCP writes and typing on the same documents):
 * - `onStoreDocument` takes a Redis lock with no retry and, when the other instance holds it, skips the
 *   store (SkipFurtherHooksError): the persistence extension never runs, so an MCP write on this instance
 *   was answered "not confirmed" whenever the other instance was storing the same document. The lock never
 *   ordered stores anyway (whoever takes it next writes its own full state), so each instance now stores
 *   its own copy, and stores again when a peer's change reaches it.
 * - `afterStoreDocument` waits `disconnectDelay` (1 s) after every store of a direct connection, inside the
 *   document's save mutex: every MCP write took over a second and writes to one document queued a second
 *   apart. Its purpose, letting the Redis round trip finish before the document unloads, is served by the
 *   extension's `beforeUnloadDocument`, which waits the same delay before any unload.
 */
class RedisSync extends RedisExtension {
  override async onStoreDocument(): Promise<void> {}
  override async afterStoreDocument(): Promise<void> {}

  /**
   * Stops applying what other instances publish (the subscriber's messages are dropped). Shutdown calls it
   * before its last flush: their editors' changes are theirs to store, and arriving during the flush they
   * kept this instance's documents unstored, so a SIGTERM under typing elsewhere exited 1 (found by the
   * balancer rehearsal, reliability/balancer-restart.test.ts).
   */
  stopReceiving(): void {
    this.sub.removeAllListeners('messageBuffer')
  }

  /**
   * After the subscriber (re)connects: subscribe again, confirmed, to every loaded document's channel and
   * to this instance's reply channel, then publish a SyncStep1 for each loaded document. Found by the Redis
   * outage suite (reliability/faults-redis.test.ts): the extension only publishes on a change, so edits
   * made on one instance while Redis was away never reached the other once Redis returned, unless someone
   * edited again (the SyncStep1s queued during the outage are sent the instant the publisher reconnects,
   * usually before the peer has subscribed again). A peer answers a SyncStep1 with what we lack and its
   * own SyncStep1, which we answer with what it lacks; whichever instance reconnects last is heard by the
   * other, so both converge without a further edit.
   */
  async announceLoadedDocuments(): Promise<void> {
    const instance = this.instance as Hocuspocus | undefined
    if (!instance) return
    const { prefix, identifier } = this.configuration
    const names = [...instance.documents.keys()]
    await new Promise<void>((resolve, reject) => {
      this.sub.subscribe(
        `${prefix}#reply:${identifier}`,
        ...names.map((name) => `${prefix}:${name}`),
        (error) => (error ? reject(error) : resolve()),
      )
    })
    for (const name of names) {
      const document = instance.documents.get(name)
      if (!document) continue
      const step1 = new OutgoingMessage(name).createSyncMessage().writeFirstSyncStepFor(document)
      await this.pub.publish(
        `${prefix}:${name}`,
        Buffer.concat([this.messagePrefix, Buffer.from(step1.toUint8Array())]),
      )
    }
  }
}

export type Collab = {
  hocuspocus: Hocuspocus
  persistence: PersistenceExtension
  /** The editor boundary (its per-user shares are read by tests). */
  boundary: EditorBoundary
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
  versionMinIntervalMs?: number
  versionPauseMs?: number
}

export function createCollab(deps: {
  config: CollabSettings
  services: Services
  /** Browsers signed in by cookie (the web editor): see AuthExtension. */
  session?: BrowserSession
  logger: Logger
  metrics: Metrics
}): Collab {
  const { config, services, logger, metrics } = deps
  const persistence = new PersistenceExtension({
    documents: services.documents,
    logger,
    metrics,
    // With Redis, other instances log the same documents: compaction merges what they logged.
    mergeWithStored: Boolean(config.redisUrl),
    compactAfterUpdates: config.storeCompactAfterUpdates,
    searchRefreshMs: config.searchRefreshMs,
    versionTiming: { minIntervalMs: config.versionMinIntervalMs, pauseMs: config.versionPauseMs },
  })
  const boundary = new EditorBoundary({ logger, metrics, stateBytes: (name) => persistence.stateBytes(name) })
  const extensions: Extension[] = [
    new AuthExtension({
      tokens: services.tokens,
      documents: services.documents,
      logger,
      metrics,
      session: deps.session,
    }),
    persistence,
    // Every editor message is checked before it is applied or broadcast (schema, depth, sizes, heading ids).
    boundary,
    // Awareness: bounded states and clientIds per connection; names, agent badges and colours from the server.
    new AwarenessGuard({ logger, metrics }),
    // Open connections follow revoke, unshare, read-only and role changes (from every instance with Redis).
    new AccessWatch({ services, logger, redisUrl: config.redisUrl }),
  ]
  let redisSync: RedisSync | undefined
  if (config.redisUrl) {
    const url = config.redisUrl
    const redis = new RedisSync({
      createClient: () => {
        // Keep retrying while Redis is away; each instance goes on serving its own clients meanwhile.
        const client = new IORedis(url, { maxRetriesPerRequest: null, lazyConnect: false })
        client.on('error', (err) => logger.warn({ err: err.message }, 'redis connection error'))
        return client
      },
    } as never)
    // Each (re)connection of the subscriber: resync every loaded document with the other instances.
    redis.sub.on('ready', () => {
      redis.announceLoadedDocuments().catch((err: Error) => {
        logger.warn({ err: err.message }, 'redis: announcing loaded documents after reconnect failed')
      })
    })
    extensions.push(redis)
    redisSync = redis
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
  metrics.addGauge('collab_documents_unstored', 'Loaded documents with changes not yet stored.', () =>
    persistence.pendingCount(),
  )
  return {
    hocuspocus,
    persistence,
    boundary,
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
