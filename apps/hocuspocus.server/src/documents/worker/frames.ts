/**
 * Hocuspocus messages made by hand, without Hocuspocus or lib0 (the documents' worker makes them, and the
 * editor boundary): an unsigned varint as lib0 writes them, and a sync step 2 framed as Hocuspocus does.
 */
import { messageYjsSyncStep2 } from 'y-protocols/sync'

/** Hocuspocus's MessageType.Sync. */
const SYNC_MESSAGE = 0

/** An unsigned varint as lib0 writes them (Hocuspocus's and y-protocols' framing). */
export function varUint(value: number): number[] {
  const out: number[] = []
  let n = value
  while (n > 0x7f) {
    out.push(0x80 | (n & 0x7f))
    n = Math.floor(n / 128)
  }
  out.push(n)
  return out
}

/** A sync step 2 carrying `update` for `address` (a document name, or name and session), in one buffer. */
export function syncStep2Message(address: string, update: Uint8Array): Uint8Array {
  const name = new TextEncoder().encode(address)
  const head = [
    ...varUint(name.length),
    ...name,
    SYNC_MESSAGE,
    messageYjsSyncStep2,
    ...varUint(update.byteLength),
  ]
  const message = new Uint8Array(head.length + update.byteLength)
  message.set(head)
  message.set(update, head.length)
  return message
}
