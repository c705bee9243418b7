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
 * Longest piece of a refresh's walk of the live document for its search text on the event loop; the walk
 * goes on in the next turn. Whole, the walk of a large document's first MAX_FIND_TEXT_CHARS characters
 * held every other client at once for tens of ms (more on a loaded machine).
 */
export const SEARCH_WALK_SLICE_MS = 8
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
/**
 * A load's parts (worker/split.ts LOAD_PART_BYTES) are applied back to back for at most this long, then
 * the event loop takes a turn for other clients: parts applied quickly (~1 ms each on a quiet machine)
 * need not each wait for a turn, and a slow one (a loaded machine) holds others for one part only.
 */
export const LOAD_TURN_MS = 8
