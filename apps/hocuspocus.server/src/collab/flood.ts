/**
 * Flood control of editor messages (docs/server.md, Limits): token buckets refilled at the rates of
 * collab/limits.ts, drawn per socket on arrival (server.ts closes a socket too far in debt) and per
 * document connection before handling (boundary.ts waits out the debt).
 */
import { UserShares } from '../user-shares.ts'
import {
  EDITOR_BYTE_BURST,
  EDITOR_BYTES_PER_SECOND,
  EDITOR_MESSAGE_BURST,
  EDITOR_MESSAGES_PER_SECOND,
  EDITOR_STRUCT_BURST,
  EDITOR_STRUCTS_PER_SECOND,
  USER_BYTE_BURST,
  USER_BYTES_PER_SECOND,
} from './limits.ts'

/** Close code and reason for a socket that sends faster than the flood rates allow for MAX_EDITOR_WAIT_MS. */
export const FLOOD_CLOSE_CODE = 1008
export const FLOOD_CLOSE_REASON = 'too many messages: slow down and reconnect'
/** The reason when it is the user's bytes across all their sockets (USER_BYTES_PER_SECOND). */
export const USER_FLOOD_CLOSE_REASON =
  'too many messages from this account across its connections: slow down and reconnect'

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

/**
 * Bytes arriving per user across all their sockets (USER_BYTES_PER_SECOND), drawn on arrival beside each
 * socket's own buckets. A socket is known as its user's once a document on it authenticated (its upgrade
 * request names it: Hocuspocus hands the same object to onAuthenticate); before that only its own
 * buckets and Hocuspocus's unauthenticated queue bound it. A socket that authenticates documents as two
 * users counts as the last.
 */
export class UserInflow {
  private readonly users = new WeakMap<object, string>()
  private readonly shares = new UserShares(USER_BYTES_PER_SECOND, USER_BYTE_BURST)

  /** The socket of this upgrade request authenticated a document as `userId`. */
  identify(request: object, userId: string): void {
    this.users.set(request, userId)
  }

  /** Whether a document on the socket of this upgrade request authenticated. */
  known(request: object): boolean {
    return this.users.has(request)
  }

  /** Draws `bytes` from the share of the socket's user; returns their debt in ms (0 for a socket not known). */
  draw(request: object, bytes: number): number {
    const user = this.users.get(request)
    return user === undefined ? 0 : this.shares.spend(user, bytes)
  }
}
