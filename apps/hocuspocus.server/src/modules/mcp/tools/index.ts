/**
 * Every tool, in the order tools/list shows them: the one list registration, the reference and the tests
 * read. A new tool is its file plus its line here; `bun run docs:reference` then writes its section of
 * docs/mcp/reference.md and docs/mcp/tools-list.json.
 */
import { appendToDocument } from './append-to-document.ts'
import { changesSince } from './changes-since.ts'
import { createDocument } from './create-document.ts'
import { decideSuggestions } from './decide-suggestions.ts'
import { editBlocks } from './edit-blocks.ts'
import { findDocuments } from './find-documents.ts'
import { findSections } from './find-sections.ts'
import { getOutline } from './get-outline.ts'
import { listChatRooms } from './list-chat-rooms.ts'
import { listSuggestions } from './list-suggestions.ts'
import { listVersions } from './list-versions.ts'
import { postChatMessage } from './post-chat-message.ts'
import { readChatThread } from './read-chat-thread.ts'
import { readDocument } from './read-document.ts'
import { replaceText } from './replace-text.ts'
import { restoreVersion } from './restore-version.ts'
import { revertChanges } from './revert-changes.ts'
import { saveVersion } from './save-version.ts'
import type { Tool } from './tool.ts'

export const TOOLS: readonly Tool[] = [
  findDocuments,
  findSections,
  getOutline,
  readDocument,
  listVersions,
  changesSince,
  createDocument,
  appendToDocument,
  editBlocks,
  replaceText,
  saveVersion,
  restoreVersion,
  revertChanges,
  listSuggestions,
  decideSuggestions,
  listChatRooms,
  readChatThread,
  postChatMessage,
]
