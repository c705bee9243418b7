/** Chat rendering: room lines for list_chat_rooms, message entries for read_chat_thread. */
import type { ChatMessageView, ChatRoomSummary } from '../../../chat/service.ts'
import { escapeFrameContent } from './frame.ts'
import { printedId } from './outline.ts'

/**
 * Rooms whose heading exists, in outline order; then rooms whose heading is gone, by section id. Each id is
 * printed as get_outline prints it (`short`: `documentShortIds` of the document); a removed heading's whole.
 */
export function roomLines(
  sections: ReadonlyArray<{ sectionId: string; title: string }>,
  rooms: readonly ChatRoomSummary[],
  short: ReadonlyMap<string, string>,
): string[] {
  const bySection = new Map(rooms.map((room) => [room.sectionId, room]))
  const lines: string[] = []
  const seen = new Set<string>()
  for (const section of sections) {
    const room = bySection.get(section.sectionId)
    if (!room || seen.has(room.sectionId)) continue
    seen.add(room.sectionId)
    lines.push(`${escapeFrameContent(section.title)} ${roomFacts(room, short)}`)
  }
  for (const room of rooms)
    if (!seen.has(room.sectionId)) lines.push(`(heading removed) ${roomFacts(room, short)}`)
  return lines
}

function roomFacts(room: ChatRoomSummary, short: ReadonlyMap<string, string>): string {
  const last = room.lastMessageAt ? room.lastMessageAt.toISOString() : 'never'
  const id = printedId(short, room.sectionId)
  return `[section_id: ${escapeFrameContent(id)}, messages: ${room.messageCount}, last activity: ${last}]`
}

/**
 * One message: a header line, then its text; lines after the first are indented two spaces, so every
 * line that starts a message is the server's header and a message cannot pass for another one. An
 * agent's message names the agent and the app it posted through (`alice's agent (Claude Desktop)`), a
 * person's the person's handle, as the server stored them from the poster's credential.
 */
export function messageEntry(message: ChatMessageView): string {
  const text = escapeFrameContent(message.text).replace(/\r\n?|\n/g, '\n  ')
  const author =
    message.authorApp === null
      ? message.authorHandle
      : `${message.authorHandle}'s agent (${message.authorApp.replace(/[()\r\n]/g, ' ')})`
  return `[seq ${message.seq}] ${escapeFrameContent(author)} at ${message.createdAt.toISOString()}: ${text}`
}

/**
 * Keeps the newest entries (the last ones) while `size + entry.length + 1 <= max`. Returns how many of
 * the newest were kept (at least one, since a message is far below the budget).
 */
export function keepNewest(entries: readonly string[], max: number): number {
  let size = 0
  let kept = 0
  for (let i = entries.length - 1; i >= 0; i--) {
    const length = entries[i]!.length
    if (kept > 0 && size + length + 1 > max) break
    size += length + 1
    kept++
  }
  return kept
}
