/**
 * The history panel's calls to /api (docs/history.md, "History on the web page"): a document's versions
 * newest first with a cursor, one version's Markdown, what changed from it to now, and restoring it.
 * Answers are read defensively into the shapes below: a field of an unexpected type is left out, never
 * passed on as markup (the panel renders text only).
 */
import { api, slugPath } from './api.ts'

/** One author of a version as the panel shows it. */
export type VersionAuthor = {
  kind: 'person' | 'agent' | 'server'
  /** The user's handle (or name). */
  who: string
  /** The app an agent (or a person's program) wrote through: an API token's label or an OAuth app's name; null for a browser. */
  app: string | null
  /** A change that was a restore of a version or a revert of changes, not new writing. */
  action: 'restore' | 'revert' | null
  /** The server's own line for this author (`alice's agent via API token "ci-bot"`), when it sent one. */
  label: string | null
}

export type VersionSummary = {
  added: number
  removed: number
  changed: number
  charsIn: number
  charsOut: number
  /** The first sections it names: `+` added, `-` removed, `~` changed. */
  sections: Array<{ kind: '+' | '-' | '~'; title: string }>
}

export type Version = {
  id: string
  createdAt: string
  /** Why it was taken: agent, pause, interval, unload, named, created, import, restore… */
  reason: string
  name: string | null
  authors: VersionAuthor[]
  summary: VersionSummary | null
}

export type VersionPage = { versions: Version[]; cursor: string | null }

export type BlockLine = { op: '-' | '+'; text: string }
export type SectionDiff = {
  kind: 'added' | 'removed' | 'changed'
  title: string
  lines: BlockLine[]
  note: string | null
}
export type VersionChanges = { sections: SectionDiff[]; authors: VersionAuthor[]; notes: string[] }

type Json = Record<string, unknown>
const str = (value: unknown): string | null => (typeof value === 'string' ? value : null)
const num = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : 0)
const obj = (value: unknown): Json => (typeof value === 'object' && value !== null ? (value as Json) : {})
const arr = (value: unknown): unknown[] => (Array.isArray(value) ? value : [])

/** An author as the server presents it: `{kind, name, app?, via, action?, text}` (api-history.ts). */
function readAuthor(raw: unknown): VersionAuthor | null {
  const a = obj(raw)
  const kindText = str(a.kind)
  const kind = kindText === 'agent' || kindText === 'server' ? kindText : 'person'
  const app = str(a.app)
  const action = str(a.action)
  return {
    kind,
    who: str(a.name) || 'someone',
    app: app ? app : null,
    action: action === 'restore' || action === 'revert' ? action : null,
    label: str(a.text),
  }
}

const SECTION_MARKS: Record<string, '+' | '-' | '~'> = {
  '+': '+',
  '-': '-',
  '~': '~',
  added: '+',
  removed: '-',
  changed: '~',
}

function readSummary(raw: unknown): VersionSummary | null {
  if (typeof raw !== 'object' || raw === null) return null
  const s = obj(raw)
  const sections: VersionSummary['sections'] = []
  for (const entry of arr(s.sections)) {
    const e = obj(entry)
    const kind = SECTION_MARKS[str(e.kind) ?? str(e.k) ?? '']
    const title = str(e.title) ?? str(e.t)
    if (kind && title !== null) sections.push({ kind, title })
  }
  return {
    added: num(s.added),
    removed: num(s.removed),
    changed: num(s.changed),
    charsIn: num(s.charsIn),
    charsOut: num(s.charsOut),
    sections,
  }
}

export function readVersion(raw: unknown): Version | null {
  const v = obj(raw)
  const id = str(v.id) ?? (typeof v.id === 'number' ? String(v.id) : null)
  if (id === null) return null
  const authors = arr(v.authors)
    .map(readAuthor)
    .filter((a): a is VersionAuthor => a !== null)
  return {
    id,
    createdAt: str(v.createdAt) ?? '',
    reason: str(v.reason) ?? '',
    name: str(v.name),
    authors,
    summary: readSummary(v.summary),
  }
}

const versionsPath = (slug: string) => `${slugPath(slug)}/versions`

export async function fetchVersions(slug: string, cursor: string | null): Promise<VersionPage> {
  const query = cursor ? `?cursor=${encodeURIComponent(cursor)}` : ''
  const page = obj(await api<unknown>(`${versionsPath(slug)}${query}`))
  return {
    versions: arr(page.versions)
      .map(readVersion)
      .filter((v): v is Version => v !== null),
    cursor: str(page.nextCursor),
  }
}

/** One version's text as Markdown (cut at the server's MAX_API_PREVIEW_CHARS; `note` then says so). */
export async function fetchPreview(
  slug: string,
  id: string,
): Promise<{ markdown: string; note: string | null }> {
  const answer = obj(await api<unknown>(`${versionsPath(slug)}/${encodeURIComponent(id)}`))
  return { markdown: str(answer.markdown) ?? '', note: str(answer.note) }
}

function readLine(raw: unknown): BlockLine | null {
  const line = obj(raw)
  const op = str(line.op)
  const text = str(line.text)
  return (op === '-' || op === '+') && text !== null ? { op, text } : null
}

/**
 * What changed from version `id` to the document now: who changed it since, and each section added,
 * removed or changed with its blocks removed and added (block text past the server's
 * MAX_API_CHANGES_CHARS is left out, and `notes` say so).
 */
export async function fetchChanges(slug: string, id: string): Promise<VersionChanges> {
  const answer = obj(await api<unknown>(`${versionsPath(slug)}/${encodeURIComponent(id)}/changes`))
  const sections: SectionDiff[] = []
  for (const raw of arr(answer.sections)) {
    const s = obj(raw)
    const kind = str(s.kind)
    const omitted = num(s.blocksOmitted)
    sections.push({
      kind: kind === 'added' || kind === 'removed' ? kind : 'changed',
      title: str(s.title) ?? '',
      lines: arr(s.blocks)
        .map(readLine)
        .filter((l): l is BlockLine => l !== null),
      note:
        s.compared === false
          ? 'Too large to compare here: read this section in the document.'
          : omitted > 0
            ? `${omitted} more changed ${omitted === 1 ? 'block' : 'blocks'} not shown here.`
            : null,
    })
  }
  const note = str(answer.note)
  return {
    sections,
    authors: arr(answer.authors)
      .map(readAuthor)
      .filter((a): a is VersionAuthor => a !== null),
    notes: note ? [note] : [],
  }
}

/**
 * Makes the document's content version `id`'s again, as one edit on the live document (every open editor
 * sees it at once), attributed to the person as a restore. `beforeVersionId` is a version of the text just
 * before: restoring it undoes this. `changed` false: the document already held that text.
 */
export async function restoreVersion(
  slug: string,
  id: string,
): Promise<{ beforeVersionId: string | null; changed: boolean }> {
  const answer = obj(
    await api<unknown>(`${versionsPath(slug)}/${encodeURIComponent(id)}/restore`, { method: 'POST' }),
  )
  return { beforeVersionId: str(answer.beforeVersionId), changed: answer.changed !== false }
}

/**
 * Takes back what version `id` changed (against the version before it), as one new edit; later changes by
 * others stay. The server refuses (409) when someone changed the same blocks since, naming them.
 */
export async function revertVersion(
  slug: string,
  id: string,
): Promise<{ beforeVersionId: string | null; changed: boolean }> {
  const answer = obj(
    await api<unknown>(`${slugPath(slug)}/revert`, { method: 'POST', json: { versionId: id } }),
  )
  return { beforeVersionId: str(answer.beforeVersionId), changed: answer.changed !== false }
}
