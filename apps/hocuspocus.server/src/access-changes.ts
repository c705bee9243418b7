/**
 * "Who may do what changed": the services that change access (token revoke, share, unshare, document
 * flags, soft delete) say so here, and whoever holds open connections (collab/access-watch.ts) re-checks
 * them. In one process this is a plain in-process emitter; with REDIS_URL every change is also published
 * on one Redis channel, so every instance (and a CLI process writing PostgreSQL directly) reaches every
 * other instance at once. No decision is made here: listeners ask the services again.
 */
import { randomUUID } from 'node:crypto'
import type IORedis from 'ioredis'
import { z } from 'zod'

export type AccessChange =
  /** Access to this document changed: for `userId` only (share, unshare) or for everyone (flags, delete). */
  | { kind: 'document'; documentId: string; userId?: string }
  /** This token was revoked. */
  | { kind: 'token'; tokenId: string }
  /** Something about this user changed that may change what they can open. */
  | { kind: 'user'; userId: string }

/** `local`: made by this process; `remote`: heard from another process through Redis. */
export type AccessChangeSource = 'local' | 'remote'
export type AccessChangeListener = (change: AccessChange, source: AccessChangeSource) => void

/** The Redis channel every instance listens on. */
export const ACCESS_CHANGES_CHANNEL = 'collab:access-changes'
/** How long closing a publisher waits for unsent changes (the CLI exits right after its command). */
export const ACCESS_PUBLISH_WAIT_MS = 3_000

export class AccessChanges {
  private readonly listeners = new Set<AccessChangeListener>()

  /** Returns a function that removes the listener. */
  on(listener: AccessChangeListener): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  /** Tells every listener; a listener that throws does not stop the others (nor the service that changed). */
  emit(change: AccessChange, source: AccessChangeSource = 'local'): void {
    for (const listener of this.listeners) {
      try {
        listener(change, source)
      } catch {
        // A listener's own failure is its own to report; the change itself has been made.
      }
    }
  }
}

const id = z.string().min(1).max(64)
const messageSchema = z.object({
  origin: z.string().max(64),
  change: z.discriminatedUnion('kind', [
    z.object({ kind: z.literal('document'), documentId: id, userId: id.optional() }),
    z.object({ kind: z.literal('token'), tokenId: id }),
    z.object({ kind: z.literal('user'), userId: id }),
  ]),
})

/** A message from the channel, or null when it is not one of ours (it is then ignored). */
export function parseAccessMessage(raw: string): { origin: string; change: AccessChange } | null {
  try {
    const parsed = messageSchema.safeParse(JSON.parse(raw))
    return parsed.success ? parsed.data : null
  } catch {
    return null
  }
}

export type AccessChangesBridge = {
  /** Waits up to ACCESS_PUBLISH_WAIT_MS for changes not yet published, then closes the connections. */
  close(): Promise<void>
}

/**
 * Publishes every local change on ACCESS_CHANGES_CHANNEL; with `subscribe`, also emits every other
 * process's changes here as `remote`. A change that cannot be published (Redis away) is reported
 * through `onError`; the periodic re-check and the token cache's lifetime still bound it.
 */
export async function bridgeAccessChanges(options: {
  redisUrl: string
  changes: AccessChanges
  subscribe: boolean
  onError(message: string): void
}): Promise<AccessChangesBridge> {
  const { redisUrl, changes, subscribe, onError } = options
  // Imported here, only with REDIS_URL: a server or CLI without Redis never loads ioredis.
  const { default: Redis } = await import('ioredis')
  const origin = randomUUID()
  let closing = false
  const connect = () => {
    // A publisher only (the CLI) connects on its first change, so read-only commands never touch Redis.
    const client = new Redis(redisUrl, { maxRetriesPerRequest: null, lazyConnect: !subscribe })
    let reported = false // once per outage, not once per reconnect attempt
    client.on('ready', () => {
      reported = false
    })
    client.on('error', (err: Error) => {
      if (reported || closing) return
      reported = true
      onError(`redis connection error: ${err.message}`)
    })
    return client
  }
  const pub = connect()
  const pending = new Set<Promise<unknown>>()
  const stopListening = changes.on((change, source) => {
    if (source !== 'local') return
    const sent = pub
      .publish(ACCESS_CHANGES_CHANNEL, JSON.stringify({ origin, change }))
      .catch((err: Error) => {
        if (!closing) onError(`publishing an access change failed: ${err.message}`)
      })
      .finally(() => pending.delete(sent))
    pending.add(sent)
  })
  let sub: IORedis | undefined
  if (subscribe) {
    sub = connect()
    sub.subscribe(ACCESS_CHANGES_CHANNEL).catch((err: Error) => {
      onError(`subscribing to access changes failed: ${err.message}`)
    })
    sub.on('message', (channel: string, raw: string) => {
      if (channel !== ACCESS_CHANGES_CHANNEL) return
      const message = parseAccessMessage(raw)
      if (message && message.origin !== origin) changes.emit(message.change, 'remote')
    })
  }
  return {
    async close() {
      stopListening()
      if (closing) return
      if (pending.size > 0) {
        let timer: ReturnType<typeof setTimeout> | undefined
        const waited = await Promise.race([
          Promise.all(pending).then(() => true),
          new Promise<boolean>((resolve) => {
            timer = setTimeout(() => resolve(false), ACCESS_PUBLISH_WAIT_MS)
          }),
        ])
        clearTimeout(timer)
        if (!waited) onError('an access change was not published: Redis did not answer in time')
      }
      closing = true
      pub.disconnect()
      sub?.disconnect()
    },
  }
}
