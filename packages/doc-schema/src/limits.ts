/** The Y.XmlFragment name TipTap's Collaboration extension binds to by default. */
export const FRAGMENT_NAME = 'default'

/** Largest Markdown input accepted in one call, in UTF-16 code units (JavaScript string length). */
export const MAX_MARKDOWN_CHARS = 65_536

/**
 * Largest Markdown file a person imports in one go (`doc import`, `POST /api/documents`), in UTF-8 bytes;
 * MAX_MARKDOWN_CHARS stays the limit of one agent write. The imported document's Yjs state must also fit
 * MAX_DOCUMENT_BYTES: prose costs about 1.25 bytes of state per byte of Markdown, so a 24 MiB manual fits,
 * while markup-dense text (a node every few bytes: short table cells, one-word list items) costs up to ~7
 * and is refused past ~9 MiB with a message to split the file.
 */
export const MAX_IMPORT_BYTES = 24 * 1024 * 1024

/**
 * Longest document title, in UTF-16 code units: titles show up in lists and outlines. The one title
 * limit: creation refuses a longer title (REST, CLI, MCP) and the store step cuts a longer first heading.
 */
export const MAX_TITLE_CHARS = 200

/** Heading attribute holding the stable section id that agents address. */
export const HEADING_ID_ATTR = 'toc-id'

/** Length of a generated heading id (URL-safe alphabet, ~96 bits of randomness). */
export const HEADING_ID_LENGTH = 16

/**
 * Deepest element nesting (the title and top-level blocks are level 1, a list item inside a top-level list
 * level 2, …; text is no level). Editors cannot build deeper (collab/boundary.ts, `checkEditorUpdate`) and
 * markdown-it refuses deeper Markdown by the same count (its `maxNesting`); a block nested deeper, which only
 * a document stored before editor input was checked can hold, reads as one placeholder line
 * (markdown/render-depth.ts), so no read recurses or stalls on it. A bullet list nested 49 levels deep fits.
 */
export const MAX_NESTING_DEPTH = 100

/** Editor input: longest attribute value (a URL, a language name, an id) an editor may set, in UTF-16 units. */
export const MAX_ATTRIBUTE_CHARS = 8_192

/**
 * Editor input: largest sync message one connection may send. A keystroke is tens of bytes and a pasted
 * book a few MiB; the WebSocket frame limit (16 MiB) is above it so the refusal can say why.
 */
export const MAX_EDITOR_UPDATE_BYTES = 8 * 1024 * 1024

/**
 * Document size: an update that adds content to a document whose Yjs state is already this large is refused
 * (deleting still works). Stores, loads and reads of a document this size stay within seconds.
 */
export const MAX_DOCUMENT_BYTES = 64 * 1024 * 1024

/**
 * Document size in Yjs items: an update, an agent's write or a restore that would take a document past this
 * many structs is refused (deleting still works; yjs/document-structs.ts), and so is an import that would
 * make more. What holding, loading, syncing and reading a document cost follows its structs, and bytes do
 * not bound them: one character inserted before the last, again and again, makes a struct of ~11 bytes of
 * state each, so MAX_DOCUMENT_BYTES held ~6.1 million of them, ~1.3 GB of heap in a live Y.Doc (~205 bytes
 * a struct, measured), ~6 s to apply on load, and as much again in each copy the documents' worker
 * decodes (a compaction, a whole read); one user within their share of structs (20,000 a second) could
 * build that in five minutes. At this ceiling a live document holds ~115 MB of heap, and a compaction's copy
 * ~100 MB more of the worker's; building one so grew the server 308-332 MB (PGlite, PostgreSQL; 300,000:
 * 256-272 MB, 500,000: 293-446 MB), and 247-300 MB once a large live document's compactions merged its
 * bytes alone (server's collab/store-policy.ts LIVE_MERGE_STRUCTS). It is the largest import plus room to edit it: the import element
 * ceiling's largest files make ~300,000-320,000 structs (a 74,000-item list; 40,000 links with emphasis),
 * a 20 MiB manual ~131,000. Deletions seldom lower the count (a deleted run stays a struct unless it merges
 * with its neighbours); the refusals say to export the document as Markdown and import that as a new one,
 * which is built with as few structs as its content needs.
 */
export const MAX_DOCUMENT_STRUCTS = 400_000

/**
 * Work ceilings of Markdown, counted while markdown-it reads it (markdown/markdown-work.ts): bytes do not
 * bound what Markdown expands to. An element is one opening token: a block, a list item, a table cell, a run
 * of text, a mark, a link, a break, an image (about one node or mark of the built document).
 *
 * One agent write (MAX_MARKDOWN_CHARS), built on the live document on the event loop: ~10 µs per element
 * (measured: 2,000 one-character table cells, ~6,100 elements: parse 30 ms, build 60 ms), so the ceiling
 * holds a write's build under ~100 ms. A 64 KiB write of prose is ~300 elements, a list of 2,000 short items
 * ~8,000; the dense inputs past it (one-character cells, a mark every few characters) are refused.
 */
export const MAX_WRITE_ELEMENTS = 8_000

/**
 * One imported file (MAX_IMPORT_BYTES, built on the import worker, off the event loop): a 20 MiB manual with
 * headings, lists, links and code is ~265,000 elements. Building costs ~30 µs and ~2.3 KiB of transient
 * memory per element when built whole (a flat list of 60,000 items, 240,000 elements: 8.7 s, +500 MB); read
 * block by block and built in parts, a flat list at the ceiling holds the worker ~6 s and ~70 MB; past it,
 * nothing is built.
 */
export const MAX_IMPORT_ELEMENTS = 300_000

/** Most cells one table may hold (import, agent write, editor update): a table is one unit on the page. */
export const MAX_TABLE_CELLS = 10_000

/**
 * Characters of link targets and titles and image sources a Markdown input may copy into the document beyond
 * its own length: reuse of a reference definition is the only way past its length (`[x][r]` copies `r`'s
 * target every time), which made 40 MB of document from 30 KB.
 */
export const MAX_MARKDOWN_EXPANSION_CHARS = 256 * 1024

/**
 * Editor input: most Yjs structs one update may insert and delete together (counted before the update is
 * decoded, yjs/update-work.ts). Bytes do not bound this work: 7.2 MB held a flat list of 100,000 items,
 * 400,000 structs that took 5.9 s to check and 3.0 s to apply on the event loop. Decoding, checking and
 * applying cost ~8 µs a struct, deleting ~4 µs (counted as half, DELETED_STRUCT_COST), so the ceiling holds
 * one update near 80 ms; a paste of ~3,000 paragraphs (element, text, string: three structs each) or the
 * deletion of a 5,000-item list fits, larger ones are refused with the advice to do it in parts.
 */
export const MAX_EDITOR_UPDATE_STRUCTS = 10_000

/**
 * The same for the sync step 2 a provider sends when it connects: everything it wrote while it was away
 * (an hour of offline typing is a few thousand structs). Higher, because refusing it would lose that work;
 * it is paced by the connection's flood control like any other update.
 */
export const MAX_SYNC_STEP2_STRUCTS = 50_000

/**
 * Work one bounded read may spend converting and rendering, in units: each element and each text run
 * counts one, each mark on a run two (the serialiser writes a construct around the run for it, two HTML
 * nodes for `<u>`-style marks). The serialiser's cost follows these, not characters (~20 µs a marked run
 * against ~0.1 µs a character of plain text), so a paragraph of 10,000 one-letter runs of alternating marks
 * cost a whole read as much as 2 s while showing 30,000 characters. A read that reaches this before its
 * character budget stops there, on an exact character of the Markdown, and says so. Ordinary text stays
 * well below it: the benchmark's generated prose spends ~8,100 per 100,000 characters, so a whole read
 * (100,000 shown, 200,000 counted) spends ~16,000.
 */
export const MAX_RENDER_WORK = 30_000

/**
 * Characters of one block's Markdown an `inBlock` edit renders, at most, to number its lines as a read
 * prints them: as many as the largest section read shows. The block is rendered only as far as the lines
 * the edit names, so an edit near the start of a list of 100,000 items costs what that start costs; a
 * line past this many characters is refused, naming replace_text, which finds text without numbering lines.
 */
export const MAX_IN_BLOCK_CHARS = 100_000

/** Default character budget of one section read: large enough for most sections, small for a context. */
export const DEFAULT_SECTION_CHARS = 16_000

/** Smallest budget honoured: below it a heading and the cut marker alone would not fit. */
export const MIN_SECTION_CHARS = 200

/**
 * Most differing stretches the exact diff looks for; past it, the middle after the common start and end
 * is one hunk. Bounds the work (Myers' diff costs (length of both) × edits) for texts up to 65,536
 * characters rewritten wholesale, where a minimal diff buys nothing.
 */
export const MAX_DIFF_EDITS = 400

/** Most names read from one `types` value (the project's schema has under 30); the rest are ignored. */
export const MAX_DECLARED_TYPES = 100
