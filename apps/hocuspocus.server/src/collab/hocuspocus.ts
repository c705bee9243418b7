/**
 * The Hocuspocus instance: authentication, persistence, and Redis when configured so several
 * server instances share live documents.
 */
import { Redis as RedisExtension } from '@hocuspocus/extension-redis'
import { type Extension, Hocuspocus } from '@hocuspocus/server'
import IORedis from 'ioredis'
import type { Config } from '../config.ts'
import type { Logger } from '../logger.ts'
import type { Metrics } from '../metrics.ts'
import type { Services } from '../services.ts'
import { AuthExtension } from './auth-extension.ts'
import { PersistenceExtension } from './persistence-extension.ts'

/** How long shutdown waits for loaded documents to unload after their final store. */
const UNLOAD_WAIT_MS = 3_000

export type Collab = { hocuspocus: Hocuspocus; persistence: PersistenceExtension; close(): Promise<void> }

export function createCollab(deps: {
  config: Pick<Config, 'storeDebounceMs' | 'storeMaxDebounceMs' | 'redisUrl'>
  services: Services
  logger: Logger
  metrics: Metrics
}): Collab {
  const { config, services, logger, metrics } = deps
  const persistence = new PersistenceExtension({ documents: services.documents, logger, metrics })
  const extensions: Extension[] = [
    new AuthExtension({ tokens: services.tokens, documents: services.documents, logger, metrics }),
    persistence,
  ]
  if (config.redisUrl) {
    const url = config.redisUrl
    extensions.push(
      new RedisExtension({
        createClient: () => {
          // Keep retrying while Redis is away; each instance goes on serving its own clients meanwhile.
          const client = new IORedis(url, { maxRetriesPerRequest: null, lazyConnect: false })
          client.on('error', (err) => logger.warn({ err: err.message }, 'redis connection error'))
          return client
        },
      } as never),
    )
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
