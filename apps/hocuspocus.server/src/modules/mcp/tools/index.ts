/** Every tool, in the order tools/list shows them. */
import { appendToDocument } from './append-to-document.ts'
import type { ToolModule } from './context.ts'
import { createDocument } from './create-document.ts'
import { editBlocks } from './edit-blocks.ts'
import { findDocuments } from './find-documents.ts'
import { getOutline } from './get-outline.ts'
import { listChatRooms } from './list-chat-rooms.ts'
import { postChatMessage } from './post-chat-message.ts'
import { readChatThread } from './read-chat-thread.ts'
import { readDocument } from './read-document.ts'
import { replaceText } from './replace-text.ts'

export const TOOLS: readonly ToolModule[] = [
  findDocuments,
  getOutline,
  readDocument,
  createDocument,
  appendToDocument,
  editBlocks,
  replaceText,
  listChatRooms,
  readChatThread,
  postChatMessage,
]
