/**
 * Every budget of the MCP module, in one place so tools, descriptions, notes, docs and tests agree.
 * Each constant names what it protects. Character counts are UTF-16 code units (JavaScript length).
 */
import { MAX_MARKDOWN_CHARS, MAX_TITLE_CHARS } from '@collab/doc-schema'
import { SEARCH_SNIPPET_CHARS } from '../../limits.ts'

/** Model context: the most characters of document or list text one tool call returns. */
export const MAX_READ_CHARS = 100_000

/**
 * A cut whole-document read counts the document's Markdown up to this many characters, so its note can
 * say the real total ("showing 99987 of 163504 characters"); past it the note says "of more than" this.
 * Counting renders the Markdown (~2 µs a character here: 13 s for a 5 MiB document), so the count is
 * bounded like the read: a cut read renders at most twice its budget, whatever the document's size.
 */
export const MAX_COUNTED_CHARS = 2 * MAX_READ_CHARS

/**
 * A whole read of a live document holding at most this many Yjs structs (items, deleted ones, format marks)
 * is rendered on the event loop (a few ms, ~5-20 µs a struct); a larger one on the documents' worker.
 * There its state is encoded here (~1-2 µs a struct) and rendered off the loop, so a dear render (a
 * paragraph of 10,000 marks: ~150 ms at MAX_RENDER_WORK) holds no other client.
 */
export const INLINE_READ_STRUCTS = 1_000

/**
 * A whole read of a document not loaded live, stored in at most this many bytes (snapshot and log), is
 * decoded and rendered on the event loop (as INLINE_READ_STRUCTS: ~30 bytes a struct); a larger one is
 * sent to the documents' worker as it was read, decoded and rendered there.
 */
export const INLINE_READ_BYTES = 32 * 1024

/**
 * A section or chapter read whose blocks, from its first up to its character budget, hold at most this
 * many Yjs items (runs of text, format marks, elements; `sectionReadItems` stops counting past it) is
 * rendered on the event loop (~5-20 µs an item quiet, so at most ~10-20 ms); a denser one on the
 * documents' worker, on the live document's copy there: a section of one paragraph of 10,000 one-letter
 * runs alternating bold and italic held the loop ~150-260 ms for a read of 2,000 characters and ~900 ms for
 * its first (load ~13 on 2 cores), where plain text of the same length took 0.5-3 ms. Ordinary prose is a
 * few items a paragraph, so its reads stay here (a round trip to the worker, and its queue, cost more).
 */
export const INLINE_SECTION_READ_ITEMS = 1_000

/** Whole reads kept for unchanged documents: the last this many live documents and stored contents each. */
export const MAX_KEPT_WHOLE_READS = 32

/** Collection pagination: rows `find_documents` returns when the caller gives no `limit`. */
export const DEFAULT_FIND_LIMIT = 20

/** Collection pagination: the largest `limit` `find_documents` accepts (bounds one page's query and output). */
export const MAX_FIND_LIMIT = 50

/**
 * find_documents freezes a paging run's order when its second page is read (a snapshot of document ids),
 * so edits between pages cannot make a document repeat or go missing. The snapshot holds at most this many
 * documents (a run longer than 200 pages of 50 is told to narrow its query) ...
 */
export const MAX_FIND_SNAPSHOT_DOCUMENTS = 10_000

/**
 * find_sections across documents: documents per page by default, and at most (each page opens the
 * content of every document it shows, so this bounds one call's work). A page's lines are bounded too:
 * each heading and snippet is cut and on one line, so 10 documents of 1 + SECTIONS_PER_FOUND_DOCUMENT
 * lines stay far below MAX_READ_CHARS.
 */
export const DEFAULT_FIND_SECTIONS_DOCUMENTS = 5
export const MAX_FIND_SECTIONS_DOCUMENTS = 10

/** find_sections across documents: matching sections shown per document; a note names the call for the rest. */
export const SECTIONS_PER_FOUND_DOCUMENT = 3

/** find_sections with slug: matching sections per page (within MAX_READ_CHARS; `start` pages on). */
export const SECTION_MATCHES_PER_PAGE = 50

/** find_sections: characters of a heading a match line shows (longer ones end with `…`). */
export const MAX_MATCH_HEADING_CHARS = 200

/**
 * find_documents (with a query) and find_sections: characters of document text a snippet shows around the
 * match, a third of them before it when the text allows, with an ellipsis where cut. On the result's line,
 * inside the data frame: a page of find_documents holds at most MAX_FIND_LIMIT snippets of this size.
 */
export const FIND_SNIPPET_CHARS = SEARCH_SNIPPET_CHARS

/** ... and lives as long as the documents service keeps it: an older cursor is refused with "start over". */
export { FIND_SNAPSHOT_TTL_MS } from '../../documents/search.ts'

/** Write size: the largest Markdown one call may add; input size: the longest title (the document model's own ceilings, re-exported). */
export { MAX_MARKDOWN_CHARS, MAX_TITLE_CHARS }

/**
 * Collection pagination: resources `resources/list` returns per page (the caller's documents, in
 * find_documents' order and with its cursors); a longer list ends with `nextCursor`.
 */
export const MAX_RESOURCE_PAGE = MAX_FIND_LIMIT

/**
 * Subscriptions (stdio sessions): resources one session may subscribe to at once; each holds a listener
 * on its document's stores until unsubscribed or the session ends.
 */
export const MAX_SUBSCRIPTIONS = 100

/**
 * Subscriptions: a subscribed URI is told of a stored change at most once per this interval; changes
 * during the pause are told together when it ends (a document typed into is one notification a pause).
 */
export const RESOURCE_UPDATE_INTERVAL_MS = 2_000

/** completion/complete: the most values one answer holds (the MCP spec's own ceiling). */
export const MAX_COMPLETION_VALUES = 100

/**
 * Progress: a call whose request carries a progress token reports each stage it reaches, and while it
 * lasts, once per this interval ("still …"), so a host whose timeout restarts on progress waits for it.
 * Bounds the notifications of one call to one a second beyond its stages.
 */
export const PROGRESS_INTERVAL_MS = 1_000

/**
 * logging/setLevel over HTTP: the levels remembered for later requests, one per token, in memory; past
 * this many the level set longest ago is forgotten (that token's calls fall back to the default level).
 */
export const MAX_REMEMBERED_LOG_LEVELS = 10_000

/** Input size: longest `find_documents` query; longer queries only slow the full-text search. */
export const MAX_QUERY_CHARS = 200

/** Request-body protection: larger POST /mcp bodies are answered 413 before any parsing. */
export const MAX_BODY_BYTES = 1024 * 1024

/** Chat: messages `read_chat_thread` returns by default. */
export const DEFAULT_CHAT_PAGE = 20

/** Chat: the most messages one `read_chat_thread` call returns. */
export const MAX_CHAT_PAGE = 50

/** Chat: the largest `before_seq` accepted; message seqs are PostgreSQL integers. */
export const MAX_CHAT_SEQ = 2_147_483_647

/** Suggestions: pending suggestions `list_suggestions` returns by default. */
export const DEFAULT_SUGGESTIONS_LIMIT = 20

/** Suggestions: the most pending suggestions one `list_suggestions` call returns (a note says when there are more). */
export const MAX_SUGGESTIONS_LIMIT = 100

/** Suggestions: characters of a suggestion's proposed (or deleted) text a line shows; the read of its section shows all. */
export const MAX_SUGGESTION_TEXT_CHARS = 300

/** Suggestions: the most ids one `decide_suggestions` call accepts or rejects. */
export const MAX_DECIDED_IDS = 100

/**
 * get_outline prints each section id by its shortest start that no other id of the document shares, and
 * never shorter than this; any tool taking a section_id accepts such a start. 6 of the 64 URL-safe
 * characters are 36 bits: two random ids of one document share them about once in 68 billion pairs.
 */
export const MIN_SECTION_ID_PREFIX = 6

/** A section_id start that several ids share is refused naming at most this many of them. */
export const MAX_PREFIX_CANDIDATES = 5
