/**
 * The Redis side of several instances sharing live documents, loaded only when REDIS_URL is set
 * (collab/hocuspocus.ts imports it then): Hocuspocus's Redis extension as a message bus, and its clients.
 */
import { Redis as RedisExtension } from '@hocuspocus/extension-redis'
import { type Hocuspocus, OutgoingMessage, type onAwarenessUpdatePayload } from '@hocuspocus/server'
import IORedis from 'ioredis'
import type { Logger } from '../logger.ts'
import { applyRemovals, awarenessClients } from './awareness-guard.ts'

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
export class RedisSync extends RedisExtension {
  constructor(configuration: ConstructorParameters<typeof RedisExtension>[0]) {
    super(configuration)
    this.sub.on('messageBuffer', (_channel: Buffer, data: Buffer) => this.applyPeersRemovals(data))
  }

  /**
   * Another instance's client left presence (closed its page, or set its state to null): the extension
   * hands the message to Hocuspocus, whose scratch Awareness drops null states (awareness-guard.ts,
   * applyRemovals), so people here kept seeing the caret until it timed out 30 s later (found by
   * presence-instances.test.ts). The removal is applied here beside it, with the extension's origin.
   * A message is the publisher's identifier (length, then bytes) and a Hocuspocus message.
   */
  private applyPeersRemovals(data: Buffer): void {
    const length = data[0] ?? 0
    if (data.subarray(1, 1 + length).toString('utf-8') === this.configuration.identifier) return
    // A view, not a copy: every message of every shared document passes here, most of them updates.
    const carried = awarenessClients(data.subarray(1 + length))
    if (!carried || carried.removed.length === 0) return
    const document = (this.instance as Hocuspocus | undefined)?.documents.get(carried.name)
    if (document) applyRemovals(document.awareness, carried.removed, this.redisTransactionOrigin)
  }

  /**
   * The extension publishes awareness only while the document has connections here, when its coalesced
   * publish runs (the next turn): the last person on this instance leaving (a page closing sends its null
   * state, then the socket closes) was never told to the others, whose pages kept the caret until it timed
   * out 30 s later. Removals are published at once, whoever is left; the rest as the extension does.
   */
  override async onAwarenessUpdate(payload: onAwarenessUpdatePayload): Promise<void> {
    const { documentName, awareness, added, updated, removed, transactionOrigin } = payload
    if (added.length > 0 || updated.length > 0) await super.onAwarenessUpdate({ ...payload, removed: [] })
    // Another instance's removal (applyPeersRemovals) was published by that instance already.
    if (removed.length === 0 || (transactionOrigin as { source?: string } | undefined)?.source === 'redis')
      return
    const message = new OutgoingMessage(documentName).createAwarenessUpdateMessage(awareness, removed)
    // Not awaited: while Redis is away the client queues it, and awareness hooks must not wait on Redis.
    // Redis closed (shutdown): the others drop the state when it times out, as before.
    void this.pub
      .publish(
        `${this.configuration.prefix}:${documentName}`,
        Buffer.concat([this.messagePrefix, Buffer.from(message.toUint8Array())]),
      )
      .catch(() => {})
  }

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

/** The extension on `url`, its clients retrying while Redis is away, resyncing after each reconnection. */
export function createRedisSync(url: string, logger: Logger): RedisSync {
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
  return redis
}
