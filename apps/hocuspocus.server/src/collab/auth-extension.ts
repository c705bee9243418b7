/**
 * Authenticates every WebSocket connection with an API token and asks the documents service whether
 * the user may read (else refuse) and write (else the connection is read-only). To refuse, a hook throws.
 */
import type { Extension, onAuthenticatePayload } from '@hocuspocus/server'
import type { TokensService } from '../auth/tokens.ts'
import type { DocumentsService } from '../documents/service.ts'
import type { Logger } from '../logger.ts'
import type { Metrics } from '../metrics.ts'
import type { ConnectionContext } from './context.ts'

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
    },
  ) {}

  async onAuthenticate({
    token,
    documentName,
    connectionConfig,
  }: onAuthenticatePayload): Promise<ConnectionContext> {
    const principal = await this.deps.tokens.verify(token)
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
