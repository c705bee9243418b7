/**
 * The editor boundary's limits (collab/boundary.ts, collab/awareness-guard.ts): how fast one connection
 * and one user may send, and how large presence (awareness) may be. The limits of what a document may
 * hold and of one update's work are the document model's (`@collab/doc-schema` limits.ts).
 */
import {
  MAX_EDITOR_UPDATE_BYTES,
  MAX_EDITOR_UPDATE_STRUCTS,
  MAX_SYNC_STEP2_STRUCTS,
} from '@collab/doc-schema'

/**
 * Flood control, per connection: messages and bytes are drawn from two buckets that refill at these rates
 * (and hold at most the burst). A connection that runs a bucket dry waits for it, which slows only its own
 * queue (Hocuspocus handles each connection's messages in order); one that would wait longer than
 * MAX_EDITOR_WAIT_MS is closed. A fast typist sends ~20 updates and carets a second; a paste is one message.
 */
export const EDITOR_MESSAGES_PER_SECOND = 200
export const EDITOR_MESSAGE_BURST = 400
export const EDITOR_BYTES_PER_SECOND = 2 * 1024 * 1024
export const EDITOR_BYTE_BURST = 2 * MAX_EDITOR_UPDATE_BYTES
export const MAX_EDITOR_WAIT_MS = 5_000

/**
 * The same bytes per user, across all their sockets, on arrival (collab/flood.ts UserInflow): a user may
 * open many sockets to many documents, each within the rates above (16 sockets sending presence at 2 MiB
 * a second each cost ~3 s of the server's CPU in 8 s, most of it receiving). Twice one socket's rate and
 * burst: a person's tabs and an agent's sockets, typing and opening documents, stay far below it. A socket
 * of a user whose debt passes MAX_EDITOR_WAIT_MS is closed when it sends (USER_FLOOD_CLOSE_REASON).
 */
export const USER_BYTES_PER_SECOND = 2 * EDITOR_BYTES_PER_SECOND
export const USER_BYTE_BURST = 2 * EDITOR_BYTE_BURST

/**
 * Updates held back per connection because they build on content this instance does not have yet: an
 * editor reconnecting from an instance that died before passing its last changes on types while the
 * handshake runs, and its typing arrives before the sync step 2 that carries those changes. They wait
 * for that step 2 (boundary.ts) instead of being refused; past these bounds they are refused as before.
 * 500 is ~25 s of fast typing; the bytes are one largest editor message.
 */
export const MAX_HELD_UPDATES = 500
export const MAX_HELD_UPDATE_BYTES = MAX_EDITOR_UPDATE_BYTES

/**
 * Structs (Yjs items inserted and deleted, ~8 µs each to decode, check and apply) per second per connection:
 * a connection that sends more waits, so one connection takes at most ~10% of the event loop however it
 * splits its work into messages. Typing is tens of structs a second; one largest paste fits the burst.
 */
export const EDITOR_STRUCTS_PER_SECOND = MAX_EDITOR_UPDATE_STRUCTS
export const EDITOR_STRUCT_BURST = MAX_SYNC_STEP2_STRUCTS

/**
 * The same work per user, across all their connections (a user may open many documents and sockets): at
 * most ~20% of the event loop for one person or agent, whatever they open. MCP calls have their own bound:
 * each call's work is capped (read budgets, write ceilings) and each user's calls draw on a share of server
 * time (`MCP_SERVER_SHARE_PERCENT`, modules/mcp/infra/server-time.ts), kept by the same UserShares.
 */
export const USER_STRUCTS_PER_SECOND = 2 * EDITOR_STRUCTS_PER_SECOND

/**
 * The same per user, in time: the event loop's time spent handling their messages (from the end of the
 * boundary's waits to the end of its afterHandleMessage: checking, applying, observers, broadcast,
 * repairs; waits inside it not counted), across all their connections. Structs and bytes do not bound
 * it: a keystroke in a paragraph of 10,000 marks is one struct and ~1 ms to apply, and one user's four
 * sockets held others' /health at a p50 of 53-87 ms. A user past the share waits before their next
 * message (`collab_editor_paced_total{by="time"}`), up to MAX_EDITOR_WAIT_MS each. 20% of the loop; the
 * burst holds a largest sync step 2 (~0.4 s) and a few documents opened with changes made offline.
 */
export const EDITOR_MS_PER_SECOND = 200
export const EDITOR_MS_BURST = 2_000
/** At most this much is charged for one message (a wait not seen as one is not charged in full). */
export const MAX_CHARGED_HANDLING_MS = 1_000
export const USER_STRUCT_BURST = MAX_SYNC_STEP2_STRUCTS

/**
 * Most clientIds one connection (one socket's one document) may ever send a state for. An editor sends
 * one: its Y.Doc's clientID, which stays the same for the connection's life. Four leaves room for a client
 * that replaces its Y.Doc without reconnecting, and bounds what a connection can put in everyone's memory
 * to four states of at most MAX_AWARENESS_STATE_BYTES each (a socket cycling fresh ids is closed at the
 * fifth).
 */
export const MAX_AWARENESS_CLIENTS_PER_CONNECTION = 4

/** Longest name shown for anyone present (a handle is at most 32 characters; names are cut to this). */
export const MAX_PRESENCE_NAME_CHARS = 64

/** Awareness (cursors, names): largest single client's state, as JSON. A caret and a name are ~300 bytes. */
export const MAX_AWARENESS_STATE_BYTES = 8_192

/** Awareness: largest awareness message a connection may send (a few clients' states). */
export const MAX_AWARENESS_MESSAGE_BYTES = 64 * 1024

/** Awareness: most client states one awareness message may carry (an editor sends its own, one). */
export const MAX_AWARENESS_STATES_PER_MESSAGE = 8

/**
 * Presence sent to others on one user's behalf, per user across their connections, in bytes of state JSON
 * times the connections of the document it goes to (presence-pacer.ts). A caret of ~300 bytes moved ten
 * times a second reaches ~700 people within it; past it, a user's newest states wait for the share (their
 * caret is shown late, never lost). The burst is one full message of states to a document ~30 have open.
 */
export const PRESENCE_FANOUT_BYTES_PER_SECOND = 2 * 1024 * 1024
export const PRESENCE_FANOUT_BYTE_BURST = 2 * 1024 * 1024

/**
 * Most connections one user may have open to one document on one instance (tabs, editors, an agent's
 * sockets): each receives every change and every presence of the document, so connections are what others'
 * edits and carets fan out to. One more is refused with the reason (docs/server.md, Limits).
 */
export const MAX_DOCUMENT_CONNECTIONS_PER_USER = 16

/**
 * Editor sockets of one client address (TRUSTED_PROXIES names it behind a proxy) that have not yet
 * authenticated a document; one more is refused at the upgrade (collab/socket-gate.ts). A provider sends
 * its token at once, but its authentication may wait for its user's share of openings (OPEN_BURST at once,
 * then OPENS_PER_SECOND, up to MAX_OPEN_WAIT_MS): a browser session of a hundred tabs restored, or an
 * office behind one address, has a few hundred waiting at the most.
 */
export const MAX_PENDING_SOCKETS_PER_ADDRESS = 256

/** How long a socket may stay open without authenticating a document (WS_AUTH_TIMEOUT_MS's default). */
export const SOCKET_AUTH_TIMEOUT_MS = 10_000

/**
 * File descriptors the instance keeps beyond its editor sockets (WS_MAX_SOCKETS's default is the process's
 * file limit less these): the embedded database's files (PostgreSQL opens ~190 at start, more as tables
 * grow), its socket, the documents' workers, PostgreSQL's and Redis's connections, HTTP requests.
 */
export const FILE_DESCRIPTORS_KEPT = 2_048

/**
 * Document connections one user may open (authenticate) a second on this instance, across their sockets,
 * and at once. Each costs the server ~0.7 ms (the credential, the document's access, a connection): one
 * user reopening sockets in 16 loops authenticated ~1,100 a second, ~75% of a core (2026-12-05). A
 * connection past the share waits for it (`collab_editor_paced_total{by="opens"}`); one that would wait
 * longer than MAX_OPEN_WAIT_MS is refused with the reason. A person restoring a browser session of a
 * hundred tabs opens them at once.
 */
export const OPENS_PER_SECOND = 20
export const OPEN_BURST = 100
export const MAX_OPEN_WAIT_MS = 5_000

/**
 * Sync answers, per user across all their connections: the bytes of document state the server encodes
 * and sends in answer to their sync step 1 messages (what the client lacks; `syncAnswerBytes` in
 * boundary.ts). A step 1 is a few bytes and its answer can be the whole document: a 5 MiB document's is
 * ~100-200 ms of the event loop to encode, and 40 step 1s with an empty state vector from one socket held
 * everyone's /health 8.7 s. Answers past the burst wait for the share to refill (one 5 MiB answer every
 * ~0.6 s, ~20% of the event loop at most); a message that would wait longer than
 * MAX_SYNC_ANSWER_WAIT_MS closes its connection. Opening a document costs one answer: the burst opens a
 * document of 8 MiB, or several smaller ones, without waiting, and the largest one (MAX_DOCUMENT_BYTES)
 * is answered at once too, its cost owed by the next. (A burst of 16 MiB let three 5 MiB answers run back
 * to back: 0.6 s of the event loop in one piece.)
 */
export const SYNC_ANSWER_BYTES_PER_SECOND = 8 * 1024 * 1024
export const SYNC_ANSWER_BYTE_BURST = 8 * 1024 * 1024
/**
 * A sync answer of at least this many bytes waits for a turn of the event loop first, so two large answers
 * are never made back to back (Hocuspocus handles a connection's messages one after another without one).
 */
export const SYNC_ANSWER_TURN_BYTES = 1024 * 1024
/**
 * A sync answer of at least this many bytes is made on the documents' worker when it is free, from the
 * updates the document was built from (boundary.ts answerOnWorker): Hocuspocus encodes it from the Y.Doc on
 * the event loop, ~20 ms per MiB. Documents loaded from at least this much keep those updates.
 */
export const SYNC_ANSWER_WORKER_BYTES = 1024 * 1024
export const MAX_SYNC_ANSWER_WAIT_MS = 10_000
/**
 * A read-only connection's sync step 2 is answered with whether the document holds it, which Hocuspocus
 * tells from a snapshot of the whole document (its delete set walks every struct: 2-9 ms for a 5 MiB
 * document of 244,000 structs, against ~100-200 ms to encode it): priced on the same share as an answer
 * of the state's bytes divided by this. A viewer sends one when it opens a document; a flood of them
 * (200 a second passed the flood limits) is paced to ~5-20% of the event loop on a 5 MiB document.
 */
export const READ_ONLY_STEP2_PRICE_DIVISOR = 16
