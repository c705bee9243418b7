/**
 * What the history panel shows of a version, as text and elements (docs/web.md, docs/history.md): why
 * it was taken, who wrote it (agents marked ✦ with their app), what changed in words, and one section of
 * a diff. Everything the server sends is set as text, never as HTML.
 */
import { h } from './dom.ts'
import type { SectionDiff, Version, VersionAuthor, VersionSummary } from './history-client.ts'

/** Section names a version's line shows at most (the counts before them stay exact). */
const SUMMARY_SECTIONS_SHOWN = 3

/** Why a version was taken, as people read it (docs/history.md, Versions). */
const REASONS: Record<string, string> = {
  agent: "After an agent's write",
  pause: 'After a pause in editing',
  interval: 'During editing',
  unload: 'When everyone left',
  created: 'Created',
  import: 'Imported',
  restore: 'Restored',
  restored: 'Restored',
  revert: 'Reverted',
  named: 'Saved by name',
}

export function kindText(version: Version): string {
  if (version.name) return `Saved as "${version.name}"`
  return REASONS[version.reason] ?? (version.reason || 'Version')
}

export function plural(count: number, word: string): string {
  return `${count.toLocaleString()} ${word}${count === 1 ? '' : 's'}`
}

/** "1 section changed, 1 added · +120 −30 characters · Goals (changed), Plan (added)". */
export function summaryText(summary: VersionSummary | null, first = false): string {
  if (!summary) return first ? 'The first version.' : 'What changed was not recorded.'
  const counts: string[] = []
  if (summary.changed) counts.push(`${plural(summary.changed, 'section')} changed`)
  if (summary.added) counts.push(`${counts.length ? summary.added : plural(summary.added, 'section')} added`)
  if (summary.removed)
    counts.push(`${counts.length ? summary.removed : plural(summary.removed, 'section')} removed`)
  if (!counts.length) return 'No text changed.'
  const parts = [
    counts.join(', '),
    `+${summary.charsIn.toLocaleString()} −${summary.charsOut.toLocaleString()} characters`,
  ]
  const words = { '+': 'added', '-': 'removed', '~': 'changed' } as const
  const named = summary.sections
    .slice(0, SUMMARY_SECTIONS_SHOWN)
    .map((s) => `${s.title || 'untitled'} (${words[s.kind]})`)
  const total = summary.added + summary.removed + summary.changed
  if (named.length)
    parts.push(named.join(', ') + (total > named.length ? ` and ${total - named.length} more` : ''))
  return parts.join(' · ')
}

/** One author: an agent is "✦ alice's agent" with its app beside it, as the chat and the presence list show it. */
function authorNode(author: VersionAuthor): HTMLElement {
  if (author.kind === 'server')
    return h('span', { class: 'author' }, author.label ?? `server (for ${author.who})`)
  const name = author.kind === 'agent' ? `✦ ${author.who}'s agent` : author.who
  return h(
    'span',
    { class: `author ${author.kind}` },
    name,
    author.app ? h('span', { class: 'badge', title: 'The app it wrote through' }, author.app) : null,
    author.action ? ` (${author.action === 'restore' ? 'restored a version' : 'reverted changes'})` : null,
  )
}

export function authorsNode(authors: readonly VersionAuthor[]): HTMLElement {
  const list = h('span', { class: 'version-authors' })
  if (!authors.length) list.append('Nobody recorded')
  authors.forEach((author, index) => {
    if (index > 0) list.append(', ')
    list.append(authorNode(author))
  })
  return list
}

export function authorsLine(lead: string, authors: readonly VersionAuthor[]): HTMLElement {
  return h('p', { class: 'since-authors' }, lead, authorsNode(authors))
}

/** One section of the diff: its heading in words, then each block removed (−) or added (+). */
export function sectionNode(section: SectionDiff): HTMLElement {
  const kind = { added: 'Added since', removed: 'Removed since', changed: 'Changed since' }[section.kind]
  const lines = h('ul', { class: 'diff-lines' })
  for (const line of section.lines) {
    const removed = line.op === '-'
    lines.append(
      h(
        'li',
        { class: removed ? 'del' : 'ins' },
        h('span', { class: 'sign', 'aria-hidden': 'true' }, removed ? '−' : '+'),
        h('span', { class: 'visually-hidden' }, removed ? 'Removed: ' : 'Added: '),
        h(removed ? 'del' : 'ins', {}, line.text),
      ),
    )
  }
  return h(
    'section',
    { class: `diff-section ${section.kind}` },
    h('h4', {}, `${kind}: `, h('span', { class: 'section-title' }, section.title || 'untitled')),
    section.note ? h('p', { class: 'note' }, section.note) : null,
    section.lines.length ? lines : null,
  )
}
