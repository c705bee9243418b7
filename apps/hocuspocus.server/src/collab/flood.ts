/**
 * Flood control of editor messages (docs/server.md, Limits): token buckets refilled at the rates of
 * collab/limits.ts, drawn per socket on arrival (server.ts closes a socket too far in debt) and per
 * document connection before handling (boundary.ts waits out the debt).
 */
import {
  EDITOR_BYTE_BURST,
  EDITOR_BYTES_PER_SECOND,
  EDITOR_MESSAGE_BURST,
  EDITOR_MESSAGES_PER_SECOND,
  EDITOR_STRUCT_BURST,
  EDITOR_STRUCTS_PER_SECOND,
} from './limits.ts'

/** Close code and reason for a socket that sends faster than the flood rates allow for MAX_EDITOR_WAIT_MS. */
export const FLOOD_CLOSE_CODE = 1008
export const FLOOD_CLOSE_REASON = 'too many messages: slow down and reconnect'

/**
 * Two token buckets (messages, bytes) refilled at the flood rates. `draw` takes one message (a bucket may
 * go below zero: that debt is how long the sender should have waited) and returns the debt in ms. Used
 * per socket on arrival (debt over MAX_EDITOR_WAIT_MS closes it, which bounds what waits in memory) and
 * per document connection before handling (waiting out the debt paces its queue).
 */
export class FloodBuckets {
  private messages = EDITOR_MESSAGE_BURST
  private bytes = EDITOR_BYTE_BURST
  private structs = EDITOR_STRUCT_BURST
  private at = performance.now()

  draw(bytes: number, structs = 0): number {
    const now = performance.now()
    const seconds = (now - this.at) / 1000
    this.at = now
    this.messages = Math.min(EDITOR_MESSAGE_BURST, this.messages + seconds * EDITOR_MESSAGES_PER_SECOND) - 1
    this.bytes = Math.min(EDITOR_BYTE_BURST, this.bytes + seconds * EDITOR_BYTES_PER_SECOND) - bytes
    this.structs = Math.min(EDITOR_STRUCT_BURST, this.structs + seconds * EDITOR_STRUCTS_PER_SECOND) - structs
    return (
      Math.max(
        -this.messages / EDITOR_MESSAGES_PER_SECOND,
        -this.bytes / EDITOR_BYTES_PER_SECOND,
        -this.structs / EDITOR_STRUCTS_PER_SECOND,
        0,
      ) * 1000
    )
  }
}
