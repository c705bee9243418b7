/**
 * The reasons the server closes an editor's connection with, as the web page reads them
 * (apps/web/src/close-reasons.ts): each reason, taken from the server's own constants, leads to what the
 * page tells the person. A socket closed for not authenticating in time (collab/socket-gate.ts) is one the
 * page connects again, never "Disconnected: reload": its next socket signs in at once.
 */
import { describe, expect, test } from 'bun:test'
import { authFailureKind, closeKind } from '../../../web/src/close-reasons.ts'
import { ACCESS_REMOVED_REASON, TOKEN_REVOKED_REASON } from '../collab/access-watch.ts'
import { TOO_MANY_CONNECTIONS, tooManyOpens } from '../collab/auth-extension.ts'
import { DOCUMENT_FULL_REASON } from '../collab/boundary.ts'
import { FLOOD_CLOSE_REASON } from '../collab/flood.ts'
import { SOCKET_AUTH_TIMEOUT_MS } from '../collab/limits.ts'
import { authTimeoutReason } from '../collab/socket-gate.ts'

describe('what the web page does with each close reason of the server', () => {
  test.each([
    ['no reason (a dropped connection)', '', 'reconnect'],
    ['no document authenticated in time', authTimeoutReason(SOCKET_AUTH_TIMEOUT_MS), 'reconnect'],
    ['a token revoked or a session ended', TOKEN_REVOKED_REASON, 'signed-out'],
    ['too many connections to the document', TOO_MANY_CONNECTIONS, 'too-many-tabs'],
    ['access taken away', ACCESS_REMOVED_REASON, 'no-access'],
    ['the document at its item limit', DOCUMENT_FULL_REASON, 'document-full'],
    ['a flood', FLOOD_CLOSE_REASON, 'disconnected'],
  ] as const)('%s', (_, reason, kind) => {
    expect(closeKind(reason)).toBe(kind)
  })

  test.each([
    ['too many connections opened from the account', tooManyOpens(3), 'too-many-opens'],
    ['too many connections to the document', TOO_MANY_CONNECTIONS, 'too-many-tabs'],
    ['no access (the server says nothing more)', 'permission-denied', 'no-access'],
  ] as const)('a refused authentication: %s', (_, reason, kind) => {
    expect(authFailureKind(reason)).toBe(kind)
  })

  test('every reason fits a WebSocket close frame (123 bytes)', () => {
    for (const reason of [
      authTimeoutReason(SOCKET_AUTH_TIMEOUT_MS),
      TOKEN_REVOKED_REASON,
      TOO_MANY_CONNECTIONS,
      ACCESS_REMOVED_REASON,
      DOCUMENT_FULL_REASON,
    ])
      expect(new TextEncoder().encode(reason).byteLength).toBeLessThanOrEqual(123)
  })
})
