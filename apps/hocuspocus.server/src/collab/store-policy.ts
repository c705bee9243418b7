/**
 * When a document's update log is merged into its snapshot, and how far search may lag the content
 * (collab/persistence/ applies them; config.ts lets an operator change the first and last).
 */

/** Log rows after which a document's log is merged into its snapshot (bounds load work and table size). */
export const COMPACT_AFTER_UPDATES = 200
/** A log holding as many bytes as the snapshot, and at least this many, is merged too. */
export const COMPACT_MIN_LOG_BYTES = 256 * 1024
/**
 * A loaded document of at least this many Yjs items is compacted by merging its stored bytes alone (no
 * outline, no summary for a version taken meanwhile) until it unloads, and fully after (collab/persistence/
 * compaction.ts): decoding it on the documents' worker held a second copy of the live document there,
 * ~290 bytes of heap an item (~29 MB here, ~115 MB at MAX_DOCUMENT_STRUCTS). The bench's 1 MiB document
 * holds ~49,000 items, its 5 MiB one ~244,000.
 */
export const LIVE_MERGE_STRUCTS = 100_000
/** How often, at most, the title and search text are rewritten while a document changes (ms). */
export const SEARCH_REFRESH_MS = 5_000
/**
 * A refresh of the title and search text waits at least this many times as long as reading them from the
 * live document took (a walk of the document on the server's thread), so it takes at most 1% of that
 * thread's time while a very large document is typed into without pause.
 */
export const SEARCH_REFRESH_DUTY = 100
/**
 * …and at least this many times as long as the database took to index them (on PGlite its own thread,
 * whose one session the stores of every document share): at most a tenth of the database's time. The wall
 * time of that write includes waiting behind other queries on a loaded machine, so it gets the lower duty;
 * search may lag a very large document by longer than SEARCH_REFRESH_MS.
 */
export const SEARCH_REFRESH_DB_DUTY = 10
/**
 * Stored content of at least this many bytes is loaded in parts (documents/worker/split.ts): split on the
 * documents' worker, each part applied in a turn of the event loop of its own. Decoding costs ~35 ms of
 * CPU per MiB there (8 MiB: 275 ms, several times that on a loaded machine), which held every client.
 */
export const LOAD_IN_PARTS_BYTES = 1024 * 1024
