/**
 * What a browser editor needs of the document model, and nothing else (no Markdown, no Yjs walks): the
 * TipTap extensions, the fragment and heading-id names, and how an editor declares its types. The web
 * editor imports this entry (`@collab/doc-schema/editor`), which keeps its bundle ~140 KB smaller.
 */
export { colorOf, isHexColor, isPresenceKey, PRESENCE_COLORS, settleColors } from './color.ts'
export { ALL_EDITOR_TYPES, EDITOR_TYPES_PARAM } from './editor-types.ts'
export {
  type Decision,
  decideSuggestions,
  listSuggestions,
  type PendingSuggestion,
} from './edits/suggestions.ts'
export { extensions, schema } from './extensions.ts'
export { FRAGMENT_NAME, HEADING_ID_ATTR, MAX_ATTRIBUTE_CHARS } from './limits.ts'
