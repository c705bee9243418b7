/**
 * What the editor page does when the server closes its connection to the document, read from the close
 * reason (the server writes its reasons for any client: collab/access-watch.ts, auth-extension.ts,
 * boundary.ts, socket-gate.ts). `reconnect`: a dropped connection, or one closed for a reason that a new
 * connection does not meet (no reason, or it did not authenticate in time): the provider connects again
 * and resends what is unsent. Every other kind ends the page's connection with what to do next.
 */
export type CloseKind =
  | 'reconnect'
  | 'signed-out'
  | 'too-many-tabs'
  | 'no-access'
  | 'document-full'
  | 'disconnected'

export function closeKind(reason: string): CloseKind {
  if (!reason) return 'reconnect'
  // The server closes a socket that authenticated nothing in time; the page's next one signs in at once.
  if (/^no document authenticated within/i.test(reason)) return 'reconnect'
  if (/token revoked or expired/i.test(reason)) return 'signed-out'
  if (/too many connections/i.test(reason)) return 'too-many-tabs'
  if (/no access to this document/i.test(reason)) return 'no-access'
  // Deleting does not bring a document under its item limit: a copy is built afresh, with few.
  if (/is at its limit of [\d,]+ items/i.test(reason)) return 'document-full'
  return 'disconnected'
}

/**
 * What the page does when the server refuses to authenticate the document (auth-extension.ts):
 * `too-many-opens` (the account opened more than the server takes in a few seconds: reload in a moment),
 * `too-many-tabs` (already as many connections to this document as one person may have), or `no-access`
 * (deleted, or no longer shared: every other refusal).
 */
export type AuthFailureKind = 'too-many-opens' | 'too-many-tabs' | 'no-access'

export function authFailureKind(reason: string): AuthFailureKind {
  if (/too many connections opened/i.test(reason)) return 'too-many-opens'
  if (/too many connections/i.test(reason)) return 'too-many-tabs'
  return 'no-access'
}
