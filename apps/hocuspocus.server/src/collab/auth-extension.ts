/**
 * Authenticates every WebSocket connection with an API token, or (the web editor) the browser's sign-in
 * cookie, and asks the documents service whether the user may read (else refuse) and write (else the
 * connection is read-only). To refuse, a hook throws.
 *
 * A cookie is attached by the browser whatever page opens the socket, so a cookie counts only when the
 * upgrade request's Origin is ours (a page on another site could otherwise edit as the person).
 */
import type { Extension, onAuthenticatePayload } from '@hocuspocus/server'
import { type Principal, TOKEN_PREFIX, type TokensService } from '../auth/tokens.ts'
import type { DocumentsService } from '../documents/service.ts'
import type { Logger } from '../logger.ts'
import type { Metrics } from '../metrics.ts'
import type { ConnectionContext } from './context.ts'

/** Signed-in browsers: their principal from the upgrade request's headers, and our origin. */
export type BrowserSession = {
  principal: (headers: Headers) => Promise<Principal | null>
  origin: () => string
}

export class AuthExtension implements Extension {
  /** Before persistence (default 100), so nothing loads for a refused connection. */
  priority = 1000
  extensionName = 'auth'

  constructor(
    private readonly deps: {
      tokens: TokensService
      documents: DocumentsService
      logger: Logger
      metrics: Metrics
      session?: BrowserSession
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
  }: onAuthenticatePayload): Promise<ConnectionContext> {
    const principal = await this.principalOf(token ?? '', requestHeaders)
    if (!principal) {
      this.deps.metrics.authFailures.inc({ reason: 'token' })
      throw new Error('unauthorized')
    }
    const resolved = await this.deps.documents.resolveRoom(documentName, principal)
    if (resolved.kind === 'error') {
      this.deps.metrics.authFailures.inc({ reason: 'document' })
      this.deps.logger.info({ userId: principal.user.id }, 'websocket refused: no such document or no access')
      throw new Error('forbidden')
    }
    const { canWrite } = resolved.value.access
    connectionConfig.readOnly = !canWrite
    this.deps.metrics.wsConnectionsOpened.inc({ mode: canWrite ? 'read-write' : 'read-only' })
    return { principal, documentId: resolved.value.document.id, canWrite }
  }
}
