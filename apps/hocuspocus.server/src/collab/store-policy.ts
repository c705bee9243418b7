/**
 * When a document's update log is merged into its snapshot, and how far search may lag the content
 * (collab/persistence/ applies them; config.ts lets an operator change the first and last).
 */

/** Log rows after which a document's log is merged into its snapshot (bounds load work and table size). */
export const COMPACT_AFTER_UPDATES = 200
/** A log holding as many bytes as the snapshot, and at least this many, is merged too. */
export const COMPACT_MIN_LOG_BYTES = 256 * 1024
/** How often, at most, the title and search text are rewritten while a document changes (ms). */
export const SEARCH_REFRESH_MS = 5_000
/**
 * A refresh of the title and search text waits at least this many times as long as the previous one took,
 * so on PGlite (whose work runs on the server's thread) it takes at most 1% of the time of a document
 * typed into without pause: search may lag a very large document by longer than SEARCH_REFRESH_MS.
 */
export const SEARCH_REFRESH_DUTY = 100
