/**
 * What the editor boundary reads of a WebSocket message before Hocuspocus does (boundary.ts), and the
 * close codes it and the awareness guard refuse with.
 */
import { IncomingMessage, MessageType } from '@hocuspocus/server'
import { messageYjsSyncStep2, messageYjsUpdate } from 'y-protocols/sync'

/** Close code for a message the boundary refused (like HTTP 422: well-formed, not acceptable). */
export const EDITOR_REFUSED_CODE = 4422
/** Close code for a message over a size ceiling (like HTTP 413). */
export const EDITOR_TOO_LARGE_CODE = 4413

/**
 * A message's type (after its document address) and, for a sync step 2 or update, its sync type and Yjs
 * update; the type is undefined when the message does not decode (Hocuspocus refuses it when it reads it).
 */
export function readMessage(message: Uint8Array): {
  type?: MessageType
  syncType?: number
  update?: Uint8Array
} {
  try {
    const incoming = new IncomingMessage(message)
    incoming.readVarString()
    const type = incoming.readVarUint() as MessageType
    if (type !== MessageType.Sync) return { type }
    const syncType = incoming.readVarUint()
    if (syncType !== messageYjsSyncStep2 && syncType !== messageYjsUpdate) return { type, syncType }
    return { type, syncType, update: incoming.readVarUint8Array() }
  } catch {
    return {}
  }
}
