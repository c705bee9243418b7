/**
 * The text of list_versions and changes_since (issue 27): one line per version (when, why, who, what),
 * and a section-by-section diff cut into units (a section's line, one removed or added block) that pages
 * on unit boundaries, or inside a unit longer than the whole budget. Names people chose (apps, versions,
 * headings) are content: they sit inside the frame, escaped. Notes are built from the limits.
 */
import { safeCut } from '@collab/doc-schema'
import { type Author, describeAuthor } from '../../../documents/history-authors.ts'
import {
  type ChangeSummary,
  MAX_DIFF_RENDER_CHARS,
  type SectionChange,
} from '../../../documents/history-diff.ts'
import type { VersionInfo, VersionReason } from '../../../documents/history-store.ts'
import { escapeFrameContent } from './frame.ts'

/** Characters of a title or a version name a line shows (longer ones end with `…`). */
export const MAX_HISTORY_TITLE_CHARS = 120

const REASONS: Record<VersionReason, string> = {
  agent: "after an agent's write",
  pause: 'after a pause in editing',
  interval: 'during continuous editing',
  named: 'named on request',
  created: 'document created',
  import: 'document imported',
  unload: 'when the last editor left',
}

function cut(text: string, max = MAX_HISTORY_TITLE_CHARS): string {
  const one = text.replace(/\s+/g, ' ').trim()
  return one.length <= max ? one : `${one.slice(0, safeCut(one, max - 1))}…`
}

export function authorsText(authors: readonly Author[]): string {
  if (authors.length === 0) return 'nobody recorded'
  // Every author kept (at most MAX_AUTHORS_KEPT per version: history-authors.ts).
  return authors.map((author) => cut(describeAuthor(author))).join('; ')
}

export function summaryText(summary: ChangeSummary | null, reason?: VersionReason): string {
  if (!summary)
    return reason === 'created' || reason === 'import' ? 'the first version' : 'changes not summarized'
  const counts = `${summary.added} added, ${summary.removed} removed, ${summary.changed} changed; ${summary.charsIn} characters in, ${summary.charsOut} out`
  if (summary.sections.length === 0) return `sections: ${counts}`
  const named = summary.sections
    .slice(0, 5)
    .map((s) => `${s.k}${s.id ? `${s.id} ` : ''}"${cut(s.t, 60)}"`)
    .join(', ')
  const total = summary.added + summary.removed + summary.changed
  return `sections: ${counts} (${named}${total > 5 ? ', …' : ''})`
}

/** One version as list_versions shows it (already escaped for the frame). */
export function versionLine(version: VersionInfo): string {
  const name = version.name ? ` "${cut(version.name)}"` : ''
  const when = version.createdAt.toISOString()
  return escapeFrameContent(
    `version ${version.id}${name} · ${when} · ${REASONS[version.reason] ?? version.reason} · by ${authorsText(version.authors)} · ${summaryText(version.summary, version.reason)}`,
  )
}

/**
 * The units of a changes answer, in order: per section its heading line (`## added|removed|changed:
 * "<title>" [section_id: …] +in −out`) and one unit per block removed (`- [n] …`) or added (`+ [n] …`);
 * a block's further Markdown lines are indented by two spaces. Escaped for the frame.
 */
export function changeUnits(changes: readonly SectionChange[]): string[] {
  const units: string[] = []
  for (const change of changes) {
    const id = change.sectionId ? ` [section_id: ${change.sectionId}]` : ' [no section_id]'
    const counts = change.compared
      ? ` +${change.charsIn} −${change.charsOut} characters`
      : ` (blocks not compared: this comparison reached ${MAX_DIFF_RENDER_CHARS} characters; ${
          change.kind === 'removed'
            ? 'a changes_since from a later version compares less at once'
            : `read_document with section_id${change.sectionId ? ` ${change.sectionId}` : ''} shows it now`
        })`
    units.push(escapeFrameContent(`## ${change.kind}: "${cut(change.title)}"${id}${counts}`))
    for (const block of change.blocks) {
      const text = block.text.replaceAll('\n', '\n  ')
      units.push(escapeFrameContent(`${block.op} [${block.block}] ${text}`))
    }
  }
  return units
}

/** The part of `units` from (`unit`, `offset`) that fits `max` characters, and where the next page starts. */
export function pageUnits(
  units: readonly string[],
  from: { unit: number; offset: number },
  max: number,
): { text: string; next: { unit: number; offset: number } | null } {
  const kept: string[] = []
  let size = 0
  let unit = from.unit
  let offset = from.offset
  while (unit < units.length) {
    const rest = offset > 0 ? `…${units[unit]!.slice(offset)}` : units[unit]!
    if (size + rest.length + 1 <= max) {
      kept.push(rest)
      size += rest.length + 1
      unit++
      offset = 0
      continue
    }
    if (kept.length === 0) {
      // A unit longer than the whole budget: shown in part, the next page continues inside it.
      const room = Math.max(1, max - 2)
      const shown = safeCut(rest, room)
      kept.push(rest.slice(0, shown))
      offset += offset > 0 ? shown - 1 : shown
    }
    break
  }
  return { text: kept.join('\n'), next: unit < units.length ? { unit, offset } : null }
}

export const historyNotes = {
  moreVersions: (cursor: string) =>
    `[More versions: call list_versions again with the same slug and cursor: "${cursor}".]`,
  versionsShown: (first: number, last: number, total: number) =>
    `[Showing versions ${first}–${last} of ${total}, newest first.]`,
  lastVersionsPage: () =>
    '[No older versions: this page reached the oldest version kept (docs/history.md: retention).]',
  moreChanges: (cursor: string) =>
    `[More changes: call changes_since again with the same slug and cursor: "${cursor}" (the same comparison, continued).]`,
  changesShown: (first: number, last: number, total: number) =>
    `[Showing change lines ${first}–${last} of ${total}.]`,
  noChanges: (since: string) => `No changes since ${since}: the document is as it was then.`,
}
