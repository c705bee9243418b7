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

/** Awareness (cursors, names): largest single client's state, as JSON. A caret and a name are ~300 bytes. */
export const MAX_AWARENESS_STATE_BYTES = 8_192

/** Awareness: largest awareness message a connection may send (a few clients' states). */
export const MAX_AWARENESS_MESSAGE_BYTES = 64 * 1024

/** Awareness: most client states one awareness message may carry (an editor sends its own, one). */
export const MAX_AWARENESS_STATES_PER_MESSAGE = 8
