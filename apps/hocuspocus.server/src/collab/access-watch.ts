/**
 * Access is a live property of an open WebSocket, not only of its first message. When the services say
 * access changed (access-changes.ts: a token revoked, a document shared, unshared, flagged or deleted;
 * from this process or, with REDIS_URL, from any other), every open connection concerned is decided
 * again through the services (tokens.usableIds, documents.accessMany: documents/access.ts decides) and
 *
 * - closed when it may no longer read (its token is revoked or expired, or the document is gone for it):
 *   the document's connection ends with code 4403 and a reason, and the socket closes too when it carries
 *   no other document;
 * - made read-only when it may still read but no longer write (read-only document, viewer role, a token
 *   without `write`): its further updates are refused by Hocuspocus and the provider is told `readonly`.
 *
 * - made writable again when it may now write (viewer -> editor, a document no longer read-only) and was
 *   read-only for access alone: the provider is told `read-write`. Only the answer of the newest re-check
 *   begun for that connection may give write access back, so a raise read before a drop or an unshare
 *   can never undo it, whatever order the queries finish in. Taking away needs no such care: an older
 *   answer that takes away what a newer one allowed is undone by the next re-check (event or pass).
 *
 * Every ACCESS_RECHECK_MS all open connections are re-checked in one batch too (two queries). That bounds
 * what no event reports: a token that expires, a change made by a CLI process writing PostgreSQL
 * directly without Redis, or one published while Redis was away.
 */
import { type Connection, type Extension, type Hocuspocus, OutgoingMessage } from '@hocuspocus/server'
import { type AccessChange, type AccessChangesBridge, bridgeAccessChanges } from '../access-changes.ts'
import type { Logger } from '../logger.ts'
import type { Services } from '../services.ts'
import type { ConnectionContext } from './context.ts'

/**
 * How often every open connection is re-checked without an event (ms): the bound after which a change
 * no event reported (expiry, a CLI writing PostgreSQL directly without REDIS_URL) reaches open sockets.
 */
export const ACCESS_RECHECK_MS = 10_000

/** Hocuspocus's Forbidden code (@hocuspocus/common), with reasons that say what happened and what to do. */
export const ACCESS_REVOKED_CODE = 4403
export const TOKEN_REVOKED_REASON = 'Forbidden: token revoked or expired; connect with a valid token'
export const ACCESS_REMOVED_REASON = 'Forbidden: no access to this document any more; ask its owner'

type Checked = { connection: Connection; context: ConnectionContext }

export class AccessWatch implements Extension {
  extensionName = 'access-watch'

  private instance: Hocuspocus | undefined
  private timer: ReturnType<typeof setInterval> | undefined
  private bridge: AccessChangesBridge | undefined
  private stopListening: (() => void) | undefined
  private periodicRunning = false
  /** Set by stopPeriodicRecheck or onDestroy, which may come before onConfigure has run (it is queued). */
  private periodicStopped = false
  private destroyed = false
  /** Counts re-checks begun; `newest` holds, per connection, the count of the last one that concerned it. */
  private begun = 0
  private readonly newest = new WeakMap<Connection, number>()

  constructor(
    private readonly deps: {
      services: Pick<Services, 'tokens' | 'documents' | 'accessChanges'>
      logger: Logger
      /** With Redis, changes made by other instances and CLI processes reach this one at once. */
      redisUrl?: string
      /** Tests may shorten it; the server uses ACCESS_RECHECK_MS. */
      recheckMs?: number
    },
  ) {}

  async onConfigure({ instance }: { instance: Hocuspocus }): Promise<void> {
    if (this.destroyed) return
    this.instance = instance
    const { services, logger, redisUrl } = this.deps
    this.stopListening = services.accessChanges.on((change) => {
      this.recheck((checked) => concerns(change, checked.context), change.kind).catch((err: Error) => {
        logger.warn({ err: err.message, change: change.kind }, 'access re-check after a change failed')
      })
    })
    if (redisUrl) {
      const bridge = await bridgeAccessChanges({
        redisUrl,
        changes: services.accessChanges,
        subscribe: true,
        onError: (message) => logger.warn({ err: message }, 'access changes through redis'),
      })
      // Destroyed while ioredis was imported: the bridge is closed at once, as onDestroy would have.
      if (this.destroyed) await bridge.close()
      else this.bridge = bridge
    }
    if (!this.periodicStopped) {
      this.timer = setInterval(() => this.periodic(), this.deps.recheckMs ?? ACCESS_RECHECK_MS)
      this.timer.unref?.()
    }
  }

  async onDestroy(): Promise<void> {
    this.destroyed = true
    this.stopPeriodicRecheck()
    this.stopListening?.()
    await this.bridge?.close()
  }

  /** Stops the periodic pass: for tests that prove an event, not the pass, closed a connection. */
  stopPeriodicRecheck(): void {
    this.periodicStopped = true
    clearInterval(this.timer)
  }

  /** Re-checks every open connection (the periodic pass); also for tests and callers that know better. */
  recheckAll(): Promise<void> {
    return this.recheck(() => true, 'periodic')
  }

  private periodic(): void {
    if (this.periodicRunning) return // a slow database: never pile passes up
    this.periodicRunning = true
    this.recheckAll()
      .catch((err: Error) => this.deps.logger.warn({ err: err.message }, 'periodic access re-check failed'))
      .finally(() => {
        this.periodicRunning = false
      })
  }

  private openConnections(select: (checked: Checked) => boolean): Checked[] {
    const found: Checked[] = []
    for (const document of this.instance?.documents.values() ?? []) {
      for (const connection of document.getConnections()) {
        const context = connection.context as Partial<ConnectionContext> | undefined
        if (!context?.principal || !context.documentId) continue
        const checked = { connection, context: context as ConnectionContext }
        if (select(checked)) found.push(checked)
      }
    }
    return found
  }

  private async recheck(select: (checked: Checked) => boolean, why: string): Promise<void> {
    const targets = this.openConnections(select)
    if (targets.length === 0) return
    const run = ++this.begun
    for (const { connection } of targets) this.newest.set(connection, run)
    const { tokens, documents } = this.deps.services
    const usable = await tokens.usableIds(targets.map((t) => t.context.principal.tokenId))
    const withToken = targets.filter((t) => usable.has(t.context.principal.tokenId))
    const accesses = await documents.accessMany(
      withToken.map((t) => ({ documentId: t.context.documentId, principal: t.context.principal })),
    )
    const refused: Array<Checked & { reason: string }> = []
    for (const target of targets) {
      if (!usable.has(target.context.principal.tokenId))
        refused.push({ ...target, reason: TOKEN_REVOKED_REASON })
    }
    withToken.forEach((target, i) => {
      const access = accesses[i]
      if (!access?.canRead) refused.push({ ...target, reason: ACCESS_REMOVED_REASON })
      else if (!access.canWrite) this.makeReadOnly(target, why)
      else if (this.newest.get(target.connection) === run) this.makeWritable(target, why)
    })
    if (refused.length === 0) return
    for (const target of refused) this.close(target, target.reason, why)
    // Then the sockets that carry nothing else: close them, so the provider sees the close and stops.
    const sockets = new Map(refused.map((t) => [t.connection.webSocket, t.reason]))
    for (const { connection } of this.openConnections(() => true)) sockets.delete(connection.webSocket)
    for (const [socket, reason] of sockets)
      if (socket.readyState < 2) socket.close(ACCESS_REVOKED_CODE, reason)
  }

  private makeReadOnly({ connection, context }: Checked, why: string): void {
    if (connection.readOnly && !context.canWrite) return
    connection.readOnly = true
    context.canWrite = false
    // The provider learns its new scope (it sets authorizedScope = 'readonly' and emits `authenticated`).
    connection.send(new OutgoingMessage(connection.messageAddress).writeAuthenticated(true).toUint8Array())
    this.deps.logger.info(
      { userId: context.principal.user.id, documentId: context.documentId, why },
      'websocket made read-only: write access was removed',
    )
  }

  /** Gives write access back, only to a connection that access alone made read-only (not a refused one). */
  private makeWritable({ connection, context }: Checked, why: string): void {
    if (context.canWrite || !connection.document.hasConnection(connection)) return
    connection.readOnly = false
    context.canWrite = true
    const address = connection.messageAddress
    connection.send(new OutgoingMessage(address).writeAuthenticated(false).toUint8Array())
    // Then a sync step 1: the provider answers with what the server lacks. Updates refused while read-only
    // stay in the client's document, and without them every later update of that client would wait on
    // them, never applied. They are this writer's now, and pass the same checks as any update.
    connection.send(
      new OutgoingMessage(address)
        .createSyncMessage()
        .writeFirstSyncStepFor(connection.document)
        .toUint8Array(),
    )
    this.deps.logger.info(
      { userId: context.principal.user.id, documentId: context.documentId, why },
      'websocket made writable: write access was given',
    )
  }

  private close({ connection, context }: Checked, reason: string, why: string): void {
    if (!connection.document.hasConnection(connection)) return // closed meanwhile
    // Read-only first: a message already queued on this connection is still processed after close().
    connection.readOnly = true
    context.canWrite = false
    connection.close({ code: ACCESS_REVOKED_CODE, reason })
    this.deps.logger.info(
      { userId: context.principal.user.id, documentId: context.documentId, why },
      'websocket closed: access was removed',
    )
  }
}

/** Whether a change can concern this connection (the re-check then decides). */
function concerns(change: AccessChange, context: ConnectionContext): boolean {
  switch (change.kind) {
    case 'token':
      return context.principal.tokenId === change.tokenId
    case 'user':
      return context.principal.user.id === change.userId
    case 'document':
      return (
        context.documentId === change.documentId &&
        (change.userId === undefined || context.principal.user.id === change.userId)
      )
  }
}
