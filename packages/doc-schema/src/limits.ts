/** The Y.XmlFragment name TipTap's Collaboration extension binds to by default. */
export const FRAGMENT_NAME = 'default'

/** Largest Markdown input accepted in one call, in UTF-16 code units (JavaScript string length). */
export const MAX_MARKDOWN_CHARS = 65_536

/** Longest document title, in UTF-16 code units: titles show up in lists and outlines. */
export const MAX_TITLE_CHARS = 512

/** Heading attribute holding the stable section id that agents address. */
export const HEADING_ID_ATTR = 'toc-id'

/** Length of a generated heading id (URL-safe alphabet, ~96 bits of randomness). */
export const HEADING_ID_LENGTH = 16

/**
 * Reads: deepest element nesting rendered to Markdown (a top-level block is level 1, a list item inside it
 * level 2, …; text is no level). A block nested deeper, which only a document stored before editor input
 * was checked can hold, is shown as one placeholder line instead, so no read recurses or stalls on it.
 */
export const MAX_RENDER_DEPTH = 100
