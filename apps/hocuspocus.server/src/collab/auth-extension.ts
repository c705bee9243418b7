/**
 * Authenticates every WebSocket connection with an API token, or (the web editor) the browser's sign-in
 * cookie, and asks the documents service whether the user may read (else refuse) and write (else the
 * connection is read-only). To refuse, a hook throws.
 *
 * A cookie is attached by the browser whatever page opens the socket, so a cookie counts only when the
 * upgrade request's Origin is ours (a page on another site could otherwise edit as the person).
 *
 * A user has at most MAX_DOCUMENT_CONNECTIONS_PER_USER connections open to one document on this instance:
 * checked when one authenticates (so nothing loads for it) and again once it is connected (several may
 * authenticate at once), where one over the limit is closed with the reason. And a user opens at most
 * OPENS_PER_SECOND connections a second across all documents (OPEN_BURST at once): past it one waits,
 * and one that would wait past MAX_OPEN_WAIT_MS is refused with the reason (a loop of reconnections is the
 * user's own cost, not everyone's).
 */
import type { Connection, connectedPayload, Extension, onAuthenticatePayload } from '@hocuspocus/server'
import { type Principal, TOKEN_PREFIX, type TokensService } from '../auth/tokens.ts'
import type { DocumentsService } from '../documents/service.ts'
import type { Logger } from '../logger.ts'
import type { Metrics } from '../metrics.ts'
import { UserShares } from '../user-shares.ts'
import type { ConnectionContext } from './context.ts'
import { FLOOD_CLOSE_CODE, type UserInflow } from './flood.ts'
import {
  MAX_DOCUMENT_CONNECTIONS_PER_USER,
  MAX_OPEN_WAIT_MS,
  OPEN_BURST,
  OPENS_PER_SECOND,
} from './limits.ts'

export const TOO_MANY_CONNECTIONS = `too many connections: you have ${MAX_DOCUMENT_CONNECTIONS_PER_USER} open to this document here; close some tabs`

const openKey = (userId: string, documentName: string) => `${userId}\n${documentName}`

export const tooManyOpens = (seconds: number) =>
  `too many connections opened: more than ${OPENS_PER_SECOND} a second from this account; try again in ${seconds} s`

/** Signed-in browsers: their principal from the upgrade request's headers, and our origin. */
export type BrowserSession = {
  principal: (headers: Headers) => Promise<Principal | null>
  origin: () => string
}

export class AuthExtension implements Extension {
  /** Before persistence (default 100), so nothing loads for a refused connection. */
  priority = 1000
  extensionName = 'auth'

  /** Per user and document, the connections open on this instance. */
  private readonly open = new Map<string, Set<Connection>>()
  /** Per user, the connections they may open (OPENS_PER_SECOND). */
  private readonly opens = new UserShares(OPENS_PER_SECOND, OPEN_BURST)

  constructor(
    private readonly deps: {
      tokens: TokensService
      documents: DocumentsService
      logger: Logger
      metrics: Metrics
      session?: BrowserSession
      /** Told which user each socket authenticated as (its bytes then count against that user's share). */
      inflow?: UserInflow
    },
  ) {}

  private async principalOf(token: string, headers: Headers): Promise<Principal | null> {
    if (token.startsWith(`${TOKEN_PREFIX}_`) || !this.deps.session) return this.deps.tokens.verify(token)
    if (headers.get('origin') !== this.deps.session.origin()) return null
    return this.deps.session.principal(headers)
  }

  async onAuthenticate({
    token,
    documentName,
    connectionConfig,
    requestHeaders,
    request,
  }: onAuthenticatePayload): Promise<ConnectionContext> {
    const principal = await this.principalOf(token ?? '', requestHeaders)
    if (!principal) {
      this.deps.metrics.authFailures.inc({ reason: 'token' })
      throw new Error('unauthorized')
    }
    const owed = this.opens.spend(principal.user.id, 1)
    if (owed > MAX_OPEN_WAIT_MS) {
      this.opens.spend(principal.user.id, -1) // a refused opening costs their share nothing more
      this.deps.metrics.authFailures.inc({ reason: 'opens' })
      const reason = tooManyOpens(Math.ceil((owed - MAX_OPEN_WAIT_MS) / 1000))
      throw Object.assign(new Error(reason), { reason })
    }
    if (owed > 0) {
      this.deps.metrics.editorPaced.inc({ by: 'opens' })
      await Bun.sleep(owed)
    }
    const resolved = await this.deps.documents.resolveRoom(documentName, principal)
    if (resolved.kind === 'error') {
      this.deps.metrics.authFailures.inc({ reason: 'document' })
      this.deps.logger.info({ userId: principal.user.id }, 'websocket refused: no such document or no access')
      throw new Error('forbidden')
    }
    if (
      (this.open.get(openKey(principal.user.id, documentName))?.size ?? 0) >=
      MAX_DOCUMENT_CONNECTIONS_PER_USER
    ) {
      this.deps.metrics.authFailures.inc({ reason: 'connections' })
      throw Object.assign(new Error(TOO_MANY_CONNECTIONS), { reason: TOO_MANY_CONNECTIONS })
    }
    this.deps.inflow?.identify(request, principal.user.id)
    const { canWrite } = resolved.value.access
    connectionConfig.readOnly = !canWrite
    this.deps.metrics.wsConnectionsOpened.inc({ mode: canWrite ? 'read-write' : 'read-only' })
    return { principal, documentId: resolved.value.document.id, canWrite }
  }

  async connected({ connection, context, documentName }: connectedPayload<ConnectionContext>): Promise<void> {
    const key = openKey(context.principal.user.id, documentName)
    const open = this.open.get(key) ?? new Set<Connection>()
    if (open.size >= MAX_DOCUMENT_CONNECTIONS_PER_USER) {
      this.deps.metrics.authFailures.inc({ reason: 'connections' })
      connection.close({ code: FLOOD_CLOSE_CODE, reason: TOO_MANY_CONNECTIONS })
      return
    }
    open.add(connection)
    this.open.set(key, open)
    connection.onClose(() => {
      const now = this.open.get(key)
      now?.delete(connection)
      if (now?.size === 0) this.open.delete(key)
    })
  }
}
