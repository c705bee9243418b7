/** ProseMirror-style JSON of a node, as `Node.toJSON()` produces and `schema.nodeFromJSON()` accepts. */
export type DocNode = {
  type: string
  attrs?: Record<string, unknown>
  content?: DocNode[]
  text?: string
  marks?: DocMark[]
}

export type DocMark = { type: string; attrs?: Record<string, unknown> }

/** Node types whose loss an agent must ask for explicitly (see `editBlocks`' `allowMediaRemoval`). */
export const MEDIA_TYPES: ReadonlySet<string> = new Set(['image', 'youtube', 'mediaEmbed'])
