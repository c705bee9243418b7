/**
 * What an editor knows: the node and mark types its schema has. A bound editor (y-prosemirror / y-tiptap)
 * deletes Yjs content its schema cannot represent as soon as it opens a document, so the server refuses an
 * editor's update that deletes content of a type the editor did not declare (`checkEditorUpdate`).
 *
 * An editor declares its types in the WebSocket URL: `ws://host:port/?types=*` for the project's whole
 * schema (an editor built from `extensions`), or `?types=paragraph,heading,bold,…` (comma-separated names).
 * An editor that declares nothing is taken to know TipTap StarterKit 3's types, the usual app.
 */
import { editorSchema } from './lazy-libs.ts'
import { MAX_DECLARED_TYPES } from './limits.ts'

/** The WebSocket URL query parameter with which an editor declares the node and mark types it knows. */
export const EDITOR_TYPES_PARAM = 'types'

/** The `types` value for "the project's whole schema": every node and mark type of `extensions`. */
export const ALL_EDITOR_TYPES = '*'

/**
 * Node and mark types of TipTap StarterKit 3 (`@tiptap/starter-kit` 3.31.3; the server's tests check this
 * list against its schema): what an editor that declares nothing is taken to know. Their attributes are
 * the project's too, except the heading id (`toc-id`), which the server keeps for every editor.
 */
export const STARTER_KIT_TYPES: readonly string[] = [
  'doc',
  'paragraph',
  'text',
  'heading',
  'blockquote',
  'bulletList',
  'orderedList',
  'listItem',
  'codeBlock',
  'hardBreak',
  'horizontalRule',
  'bold',
  'italic',
  'strike',
  'underline',
  'code',
  'link',
]

/** The node and mark types an editor knows: every type of the project's schema, or these names. */
export type EditorTypes = { all: true } | { all: false; names: ReadonlySet<string> }

const everyType: EditorTypes = { all: true }
const starterKit: EditorTypes = { all: false, names: new Set(STARTER_KIT_TYPES) }

/**
 * The types declared by a `types` parameter value (null when absent). Absent or empty: StarterKit's.
 * `*` anywhere in the list: the project's whole schema. Otherwise exactly the names listed; names the
 * project's schema lacks are ignored (the server holds no content of those types).
 */
export function parseEditorTypes(value: string | null | undefined): EditorTypes {
  if (!value?.trim()) return starterKit
  const names = new Set<string>()
  for (const raw of value.split(',', MAX_DECLARED_TYPES)) {
    const name = raw.trim()
    if (name === ALL_EDITOR_TYPES) return everyType
    if (Object.hasOwn(editorSchema().nodes, name) || Object.hasOwn(editorSchema().marks, name))
      names.add(name)
  }
  return { all: false, names }
}

/** Whether an editor that declared `types` knows the node or mark type `name`. */
export function knowsType(types: EditorTypes, name: string): boolean {
  if (types.all) return Object.hasOwn(editorSchema().nodes, name) || Object.hasOwn(editorSchema().marks, name)
  return types.names.has(name)
}
