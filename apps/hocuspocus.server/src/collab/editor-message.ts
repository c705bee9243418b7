/**
 * What the editor boundary reads of a WebSocket message before Hocuspocus does (boundary.ts), and the
 * close codes it and the awareness guard refuse with.
 */
import { IncomingMessage, MessageType } from '@hocuspocus/server'
import { messageYjsSyncStep1, messageYjsSyncStep2, messageYjsUpdate } from 'y-protocols/sync'

/** Close code for a message the boundary refused (like HTTP 422: well-formed, not acceptable). */
export const EDITOR_REFUSED_CODE = 4422
/** Close code for a message over a size ceiling (like HTTP 413). */
export const EDITOR_TOO_LARGE_CODE = 4413

/**
 * A message's type (after its document address) and where that type is in the message (`typeAt`); for a
 * sync step 2 or update, its sync type and Yjs update; for a sync step 1, its state vector. The type is
 * undefined when the message does not decode (Hocuspocus refuses it when it reads it).
 */
export function readMessage(message: Uint8Array): {
  type?: MessageType
  typeAt?: number
  syncType?: number
  update?: Uint8Array
  vector?: Uint8Array
} {
  try {
    const incoming = new IncomingMessage(message)
    incoming.readVarString()
    const typeAt = incoming.decoder.pos
    const type = incoming.readVarUint() as MessageType
    if (type !== MessageType.Sync) return { type, typeAt }
    const syncType = incoming.readVarUint()
    if (syncType === messageYjsSyncStep1)
      return { type, typeAt, syncType, vector: incoming.readVarUint8Array() }
    if (syncType !== messageYjsSyncStep2 && syncType !== messageYjsUpdate) return { type, typeAt, syncType }
    return { type, typeAt, syncType, update: incoming.readVarUint8Array() }
  } catch {
    return {}
  }
}
