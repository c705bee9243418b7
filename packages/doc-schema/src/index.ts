export {
  colorAttributeProblem,
  colorOf,
  contrastRatio,
  isHexColor,
  isPresenceKey,
  PRESENCE_COLORS,
  pickColor,
  settleColors,
} from './color.ts'
export {
  createDocumentUpdate,
  importedDocumentUpdate,
  importedPartsUpdate,
  normaliseTitle,
  writeNewDocument,
} from './create-document.ts'
export type { DocMark, DocNode } from './doc-json.ts'
export {
  ALL_EDITOR_TYPES,
  EDITOR_TYPES_PARAM,
  type EditorTypes,
  knowsType,
  parseEditorTypes,
  STARTER_KIT_TYPES,
} from './editor-types.ts'
export { appendMarkdown } from './edits/append-markdown.ts'
export { type EditBlocksInput, editBlocks } from './edits/edit-blocks.ts'
export { proposeEdit } from './edits/propose-edit.ts'
export { reassignDuplicateIds, repairHeadingIds } from './edits/reassign-ids.ts'
export { type ReplaceTextOptions, replaceText } from './edits/replace-text.ts'
// What the browser editor's entry has (editor.ts) but TipTap's extensions, which the barrel leaves out so
// that the server loads TipTap at its first check of content, not at start (lazy-libs.ts): import
// `extensions` from `@collab/doc-schema/editor`, the schema through `editorSchema`.
export {
  type Decision,
  decideSuggestions,
  listSuggestions,
  type PendingSuggestion,
} from './edits/suggestions.ts'
export { type FirstScreen, firstScreenHtml } from './first-screen.ts'
export { isHeadingId, newHeadingId } from './heading-id.ts'
export { importedStateInParts } from './import-state.ts'
export { editorSchema } from './lazy-libs.ts'
export {
  DEFAULT_SECTION_CHARS,
  FRAGMENT_NAME,
  HEADING_ID_ATTR,
  MAX_ATTRIBUTE_CHARS,
  MAX_DECLARED_TYPES,
  MAX_DIFF_EDITS,
  MAX_DOCUMENT_BYTES,
  MAX_DOCUMENT_STRUCTS,
  MAX_EDITOR_UPDATE_BYTES,
  MAX_EDITOR_UPDATE_STRUCTS,
  MAX_IMPORT_BYTES,
  MAX_IMPORT_ELEMENTS,
  MAX_MARKDOWN_CHARS,
  MAX_MARKDOWN_EXPANSION_CHARS,
  MAX_NESTING_DEPTH,
  MAX_RENDER_WORK,
  MAX_SYNC_STEP2_STRUCTS,
  MAX_TABLE_CELLS,
  MAX_TITLE_CHARS,
  MAX_WRITE_ELEMENTS,
  MIN_SECTION_CHARS,
} from './limits.ts'
export type { MediaStyle, SerializeOptions } from './markdown/blocks-to-mdast.ts'
export {
  documentMarkdownPieces,
  documentMarkdownPrefix,
  documentToMarkdown,
} from './markdown/document-to-markdown.ts'
export {
  type ImportedMarkdown,
  type ImportedMarkdownParts,
  importMarkdown,
  importMarkdownParts,
} from './markdown/import-markdown.ts'
export { type ParseOptions, parseMarkdown } from './markdown/parse-markdown.ts'
export { blocksToMarkdownPieces, type MarkdownPrefix } from './markdown/serialize-markdown.ts'
export { escapeTypedMarkers } from './markdown/suggestion-text.ts'
export { plainTextWalk, readPlainText, readTitle, readTitleAndTextOf } from './read-document.ts'
export {
  type Ok,
  ok,
  REASON_CODE,
  type Refusal,
  type RefusalCode,
  type RefusalReason,
  type Result,
  refuse,
  refuseFor,
} from './result.ts'
export { type DerivedStream, derivedStream } from './sections/derived-stream.ts'
export {
  findInSections,
  type SectionMatch,
  type SectionMatches,
  SNIPPET_CHARS,
} from './sections/find-text.ts'
export { liveOutline } from './sections/live-memo.ts'
export { type OutlineNode, readOutline, readOutlineOf, withWellFormedIds } from './sections/outline.ts'
export { createOutlineMemo, type OutlineMemo } from './sections/outline-memo.ts'
export {
  blockMarkdown,
  type ChapterNext,
  type ChapterOptions,
  type ChapterRender,
  flatBlockMarkdown,
  keepSectionRead,
  keptSectionRead,
  type RenderOptions,
  renderChapter,
  renderSection,
  type SectionRender,
  type ShownSection,
  sectionMeasureSteps,
} from './sections/render-section.ts'
export { findSection, listSections, locateSections, type SectionInfo } from './sections/section-index.ts'
export { type SectionReadAsk, sectionReadItems } from './sections/section-read-cost.ts'
export { REV_LENGTH } from './sections/section-rev.ts'
export {
  adoptRevs,
  adoptTotals,
  forgetKeptTotals,
  measuredElements,
  type StoredSectionRev,
} from './sections/section-total.ts'
export {
  flatOutlineWithTotals,
  liveOutlineWithTotals,
  outlineMeasureSteps,
  readOutlineWithTotals,
  type StoredOutlineNode,
  storedRevs,
  storedTotals,
} from './sections/stored-totals.ts'
export { finishSteps } from './steps.ts'
export {
  SUGGESTION_DELETE,
  SUGGESTION_INSERT,
  SUGGESTION_MARKS,
  type SuggestionAttrs,
} from './suggestion-marks.ts'
export { cutText, safeCut } from './text-cut.ts'
export {
  type AppendMerged,
  diffAppended,
  mergeAppended,
  mergeInOrder,
  mergeWithVector,
} from './yjs/append-merge.ts'
export { restoreHeadingIds, type StrippedId } from './yjs/check-deletions.ts'
export { checkEditorUpdate, type UpdateCheck } from './yjs/check-update.ts'
export {
  documentStructs,
  newStateOverStructs,
  structsAdmitted,
  structsOverMessage,
} from './yjs/document-structs.ts'
export { type FlatDocument, flatTopLevel, readFlat } from './yjs/flat-read.ts'
export { type InsertedText, ownTextMarks, unmarkOwnText } from './yjs/own-text.ts'
export { plainTextBlocksRead } from './yjs/plain-text.ts'
export { createPlainTextMemo, livePlainText, type PlainTextMemo } from './yjs/plain-text-memo.ts'
export { fragmentToJSON } from './yjs/read-y.ts'
export { countUpdateWork, type UpdateWork } from './yjs/update-work.ts'
