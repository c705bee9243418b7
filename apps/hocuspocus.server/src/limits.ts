/**
 * The services' limits: what the documents, search, chat, accounts and tokens services accept and keep.
 * Each is one named constant with its reason; the transports quote them (MCP descriptions, REST errors,
 * the CLI's usage). The document model's own limits are `@collab/doc-schema`'s limits.ts; an MCP answer's
 * are modules/mcp/limits.ts; the editor boundary's are collab/limits.ts.
 */

/** Characters of a title's words kept in its slug (before the random tail): a link stays readable and short. */
export const MAX_SLUG_BASE_CHARS = 48

/**
 * Characters of a document's text a query can match: the first ~500 pages. Past it a document is not
 * found by its text (docs/mcp/reference.md says so). Bounds what the search chunks of one document hold
 * (documents/search-chunks.ts) and what each refresh reads of the live document.
 */
export const MAX_FIND_TEXT_CHARS = 1_000_000

/**
 * Characters of a section's text find_sections' stemmer look sends per section (search-sections.ts):
 * PostgreSQL refuses a tsvector over 1 MiB; this keeps every one well inside it.
 */
export const MAX_SEARCH_VECTOR_CHARS = 200_000

/**
 * The search text is indexed in chunks (documents/search-chunks.ts): each at least this many characters
 * (the document's last may be shorter), so a million characters are ~35 rows, each a few milliseconds to
 * index; a refresh rewrites only the chunks an edit changed.
 */
export const SEARCH_CHUNK_MIN_CHARS = 16_384

/** ...and at most this many: past it a chunk is cut at its last white space (or where it is, in none). */
export const SEARCH_CHUNK_MAX_CHARS = 65_536

/**
 * Characters each chunk after the first repeats from the end of the one before, so a term or phrase across
 * a boundary is whole in one chunk: more than a query's MAX_QUERY_CHARS (200) with white space between its
 * words, and a snippet's lead.
 */
export const SEARCH_CHUNK_OVERLAP_CHARS = 1_024

/**
 * Documents one search ranks at most (find_documents, find_sections, the web page's search): a query whose
 * words are in more documents than this, or in more than MAX_SEARCH_CANDIDATES documents the indexes
 * name, is ranked among the MAX_RANKED_DOCUMENTS most recently changed documents in its scope, and says
 * so. Ranking reads each document's chunks (its phrases, whole tokens and ts_rank_cd): ~40–75 µs a
 * 2,000-character document on PostgreSQL, ~130 µs on PGlite, so 1,000 cost ~40–130 ms, in statements of
 * RANK_SLICE_DOCUMENTS (documents/search.ts); ranking every one of 33,000 matches took 1.3 s on PostgreSQL
 * and 2.5 s on PGlite, holding its one session as long.
 */
export const MAX_RANKED_DOCUMENTS = 1_000

/**
 * Bytes of text (the documents' search chunks, UTF-8, overlaps included) one search ranks at most, counted
 * over its documents most recently changed first: ranking reads every chunk of a document (~20–35 ns a
 * byte on PGlite: ~20–35 ms a million-character document), so 1,000 documents of a million characters
 * would be ~25 s of the database. Matches holding more text than this are ranked among the most recently
 * changed of them that fit (at least one), and the answer says how many (find_documents, find_sections,
 * the web page's search); 16 MiB is 1,000 documents of ~16,000 characters, or 16 of a million.
 */
export const MAX_RANKED_TEXT_BYTES = 16 * 1024 * 1024

/**
 * Bytes of text one search statement reads at most beyond its first document (a ranking slice, a page's
 * snippets; documents/search.ts): ~20–35 ms on PGlite, whose one session stores and other people's
 * reads share. A document is never split, so a statement of one document reads all of it (at most
 * MAX_FIND_TEXT_CHARS characters, ~1–4 MB).
 */
export const SEARCH_STATEMENT_TEXT_BYTES = 1024 * 1024

/**
 * Matches a search reads from each kind of the chunks' indexes before it calls the query broad: the
 * trigram indexes (terms as written; each chunk found is read again by the index's recheck, ~28 µs a
 * 2,000-character chunk on PostgreSQL, ~40 µs on PGlite: 1,200 are ~35–50 ms) and the full-text indexes
 * (words in some form; exact, no recheck). Every document holding the words counts, whoever may read it,
 * so the work is bounded whatever the scope; the results never list a document its caller cannot read.
 */
export const MAX_SEARCH_CANDIDATES = 1_200

/**
 * Chunks of documents of several chunks (each 16,384 to 65,536 characters) a search reads through its
 * leading term's index, each way (as written, in some form), before it calls the query broad: each is read
 * again by the index's recheck (~0.5 ms a 64 K chunk on PGlite: 256 are ~10–130 ms), and the query's other
 * terms are then looked for once in each document those chunks belong to. A word in more chunks of long
 * documents than this is broad, as a word in more than MAX_SEARCH_CANDIDATES documents is.
 */
export const MAX_SEARCH_CANDIDATE_PARTS = 256

/**
 * Bytes of text of those documents a search reads, each way, to look for the query's other terms (its
 * terms but the longest): ~10–20 ns a byte on PGlite, so 2 MiB is ~20–40 ms. Past it the query is broad:
 * its longest term is in long documents holding more text than this, and each of them would be read
 * whole where the other term is in none (40 such documents of ~800,000 characters: 0.5 s, and 11 s when
 * each chunk found read its document again).
 */
export const MAX_SEARCH_CHECKED_TEXT_BYTES = 2 * 1024 * 1024

/** Terms one query may have; each is one more trigram condition. */
export const MAX_QUERY_TERMS = 10

/**
 * Characters of document text a search snippet shows around the match (find_documents, find_sections and
 * the web page's search: FIND_SNIPPET_CHARS in modules/mcp/limits.ts is this), a third of them before it
 * when the text allows, with an ellipsis where cut.
 */
export const SEARCH_SNIPPET_CHARS = 160

/**
 * Versions (docs/history.md): the retention tiers, youngest first. A version younger than `youngerThanMs`
 * is kept when it is the newest of its `everyMs` slot (0: every one); older than the last tier, only named
 * versions stay. With at most one automatic version per MIN_VERSION_INTERVAL_MS this keeps at most
 * 60 + 46 + 28 versions, plus the named ones: storage per document is bounded by ~150 × its state size.
 */
export const VERSION_RETENTION: ReadonlyArray<{ youngerThanMs: number; everyMs: number }> = [
  { youngerThanMs: 2 * 3_600_000, everyMs: 0 },
  { youngerThanMs: 2 * 86_400_000, everyMs: 3_600_000 },
  { youngerThanMs: 30 * 86_400_000, everyMs: 86_400_000 },
]

/** Automatic versions of one document are at least this far apart (an agent's burst of writes is one). */
export const MIN_VERSION_INTERVAL_MS = 2 * 60_000

/** People's edits become a version once nobody typed for this long (and MIN_VERSION_INTERVAL_MS allows). */
export const VERSION_PAUSE_MS = 60_000

/**
 * With people in the document, an agent's writes become one version once that agent wrote nothing for
 * this long, or at once when someone else's change is stored after them (the version is of the log up to
 * the agent's last write, so that change is never in it). Before, every write asked for a version at once:
 * through a burst the documents' worker merged the whole state back to back, one version per merge, and
 * the burst's stores waited behind it. Short, so a person
 * watching the history panel sees an agent's write there within seconds; a model's calls seconds apart
 * are still a version each, a scripted burst is one.
 */
export const AGENT_VERSION_PAUSE_MS = 3_000

/** Named versions kept per document (the oldest named one goes first) and for how long. */
export const MAX_NAMED_VERSIONS = 20
export const NAMED_VERSION_KEEP_MS = 365 * 86_400_000

/** Hard ceiling of versions per document whatever the tiers say (the oldest go first). */
export const MAX_VERSIONS_PER_DOCUMENT = 200

/** Longest name of a named version. */
export const MAX_VERSION_NAME_CHARS = 100

/**
 * Largest state (bytes) a restore or a revert decodes at once, the live document's and each version's
 * (documents/history-undo.ts). Its heavy work runs on the documents' worker: the "before" version is the
 * stored content merged, described and encoded there (history-before.ts) and written in slices, the edit
 * is worked out there, and a document not loaded is loaded in parts split there (collab/store-policy.ts
 * LOAD_IN_PARTS_BYTES); the event loop applies the edit and passes bytes along. Bounded by what the
 * worker does in JOB_DEADLINE_MS and by red-team-history's measurement (docs/history.md, "Bounds").
 */
// 2 MiB, not 8: in a quiet clean-clone run a revert in a 7.8 MiB state still held others' keystrokes at
// p99 528 ms (floor 48) on PGlite and 853 ms (floor 19) on PostgreSQL, and grew RSS 278-446 MiB
// (red-team-history). Since then the large edit is applied in parts, the load's snapshot and an author's
// versions are read in slices and decoded on the worker, the search text walk is sliced and states go to
// the worker as transfers: at 7.7 MiB keystrokes 10x -> 2.4-3.8x their floor, but RSS still +700 MiB (the
// document loaded whole, the worker's scratch documents) against the 200 MB bar (docs/history.md "Bounds").
// Then a delete-only revert's store confirmed without reading the state back, and states carried as bytes
// (no joined text, no clone): the loop's CPU over a 7.7 MiB revert 7.6 -> 6.0 s in pieces under ~65 ms,
// RSS +173-403 MiB, keystrokes still several times their floor at load 13-15: not yet raised. Then states
// just written are not read back (documents/recent-states.ts; 2 reads of the state in a revert, not 6): the
// loop's CPU 1.28 -> 0.96 s at 1.9 MiB, 3.1-4.1 -> 2.7-4.2 s at 7.8 MiB, keystrokes still 2-10x a floor of
// 70-570 ms at load 7-22, RSS not lower: not yet raised.
export const MAX_HISTORY_STATE_BYTES = 2 * 1024 * 1024

/**
 * A restore or revert whose states (the live document's and the versions') add up to at most this many
 * bytes is worked out on the event loop, not the documents' worker: the work is tens of milliseconds (a
 * 6 KB state 25-75 ms here), less than the worker's round trip, and it does not take the user's one job
 * of that kind on the worker (two restores of small documents at once both go through). A version's
 * preview (`GET …/versions/:id`) of at most this many bytes is likewise rendered on the event loop.
 */
export const HISTORY_INLINE_BYTES = 64 * 1024

/**
 * A live document of at most this many Yjs structs is compared with a version (changes_since, the web
 * page's changes) on the event loop when the version's state is within HISTORY_INLINE_BYTES too; a larger
 * one on its copy on the documents' worker (documents/service.ts `changesSince`). As a whole read's
 * INLINE_READ_STRUCTS: at this size the comparison is a few ms, less than the worker's round trip.
 */
export const COMPARE_INLINE_STRUCTS = 1_000

/** Versions one revert of an author's changes walks at most (each decoded once; history-undo.ts). */
export const MAX_REVERT_VERSIONS = 30

/** Documents' worker: jobs (large imports and exports, restores and reverts) that may wait, all users together. */
export const MAX_QUEUED_JOBS = 8

/** Documents' worker: jobs of one kind one user may have waiting or running at a time. */
export const MAX_JOBS_PER_USER_AND_KIND = 1

/**
 * Documents' worker: whole reads of one user (and section reads rendered there) that wait for their
 * earlier one (an agent's parallel tool calls), one at a time in the worker's queue; one more is refused.
 * Reads of a few tens of KiB go there, so refusing the second at once refused ordinary parallel reads.
 */
export const MAX_WAITING_WHOLE_READS_PER_USER = 4

/**
 * Documents' worker: live documents whose copy it keeps between whole reads (worker/read.ts), so a read
 * after an edit is sent only the edit; the least recently read copy goes first.
 */
export const MAX_LIVE_COPIES = 16

/**
 * Documents' worker: large live documents whose load parts and merged changes it keeps merged between
 * editors' sync answers (worker/sync-answer.ts), so a later answer is sent only what was added since; the
 * least recently answered goes first. Each is about the document's stored size.
 */
export const MAX_MERGED_DOCUMENTS = 8

/**
 * Documents' worker: Yjs structs its copies of live documents hold together, at most (~240 bytes of heap
 * each, measured on the red team's paragraph of 10,000 marks: 30,000 structs, 6.8 MiB): ~60 MiB. A
 * document past it is read from its whole state each time, as before copies were kept.
 */
export const MAX_LIVE_COPY_STRUCTS = 250_000

/** Chat: longest message, in characters, after cleaning (chat/posting.ts). */
export const MAX_CHAT_MESSAGE_CHARS = 2_000

/** Chat: longest app name kept with an agent's message (an OAuth app's name, an API token's label). */
export const MAX_CHAT_APP_NAME_CHARS = 64

/** Longest display name of a person. */
export const MAX_NAME_CHARS = 100

/** Shorter passwords are refused: 12 characters resist offline guessing far better than 8. */
export const MIN_PASSWORD_CHARS = 12

/** Longer inputs are refused before hashing, so a request cannot buy minutes of argon2 work. */
export const MAX_PASSWORD_CHARS = 256

/** Longest label of an API token (what the person calls it). */
export const MAX_LABEL_CHARS = 100

/** Latest expiry an API token may be given, in days (ten years). */
export const MAX_EXPIRES_DAYS = 3650

/**
 * The first screen of a document the web page is served with, shown read-only until its live editor is
 * built (http/first-screen.ts, docs/web.md "Opening a large document"): at most this many top-level blocks,
 * more than a tall desktop window shows of short paragraphs.
 */
export const FIRST_SCREEN_BLOCKS = 50

/**
 * ...and at most this much work in all (characters of text plus elements): two or three screens of prose,
 * so a page's HTML grows by tens of KB at most; a block that would pass it ends the screen there.
 */
export const FIRST_SCREEN_WORK = 10_000

/**
 * ...and a document stored larger than EXPORT_INLINE_BYTES that no one has open gets its first screen from
 * the documents' worker's short lane (never behind an import), stopped past this many ms (worker/pool.ts):
 * a screen later than this is no sooner than the editor. Counted from the job's start, so it includes
 * starting a worker: 2.5 s cold for a 450 KB state on a loaded 2-core machine, 0.3-0.6 s warm.
 */
export const FIRST_SCREEN_JOB_MS = 10_000

/**
 * An editor's sync answer for a large live document made on the documents' worker
 * (documents/worker/sync-answer.ts) is stopped past this many ms, counted from the job's start (a cold
 * worker's start included), and Hocuspocus answers it on the event loop instead: the editor waits for its
 * document meanwhile, so the worker's try is kept short.
 */
export const SYNC_ANSWER_JOB_MS = 5_000

/**
 * An editor's sync answer that finds the worker's short lane full (SHORT_LANE_JOBS), or its user's own
 * answer already there, waits for room this many ms at most (worker/pool.ts admitLater), then is answered
 * on the event loop as before. One answer of a 5 MiB document takes ~50-150 ms on the lane, so a burst of
 * a dozen editors opening it at once is answered within ~2 s, none of them on the event loop.
 */
export const SYNC_ANSWER_WAIT_MS = 3_000

/** Sync answers waiting for room on the short lane, all users together; one more is refused at once. */
export const MAX_WAITING_SYNC_ANSWERS = 32

/**
 * Sync answers of one user waiting for room on the short lane (their tabs and documents), answered one at
 * a time; one more is refused at once (then paced by the user's share of sync answers, on the event loop).
 */
export const MAX_WAITING_SYNC_ANSWERS_PER_USER = 4

/** How long an invite link works (auth/accounts.ts); it works once. */
export const INVITE_TTL_MS = 7 * 24 * 60 * 60 * 1000
