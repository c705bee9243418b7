/**
 * Restore a version, revert one version's changes, or revert one author's changes since a point (issue 27;
 * docs/history.md "Restore and revert"): the one path the MCP tools (restore_version, revert_changes) and
 * REST (http/api-history.ts) share. Each first takes a named version of the document as it is ("Before
 * restore of version 12"), so the action itself can be undone by restoring that, then applies ONE edit on
 * the live document through the caller's writer, attributed to the caller with the action
 * (history-authors.ts). The "before" version is the stored content merged on the documents' worker
 * (history-before.ts), after the live document's unstored changes are stored; the edit is worked out on
 * the worker from its state (history-undo.ts planUndo, with the caller's share of the worker) and applied
 * only if it is still right (applyUndoPlan). Refusals name the field at fault and what to do.
 */
import { ok, type Result, refuse } from '@collab/doc-schema'
import type * as Y from 'yjs'
import { MAX_REVERT_VERSIONS } from '../limits.ts'
import type { History } from './history.ts'
import { type Author, describeAuthor } from './history-authors.ts'
import type { BeforeVersion } from './history-before.ts'
import type { KnownVersion, VersionInfo } from './history-store.ts'
import {
  applyUndoPlan,
  tooLarge,
  type UndoInput,
  type UndoPlan,
  type UndoStep,
  undoRest,
} from './history-undo.ts'
import type { DocumentRow } from './rows.ts'

/**
 * Applies an edit to the live document (MCP's writer): its value, or a refusal that changed nothing.
 * `rest`: more of the same edit, applied once `edit` succeeded, each in a transaction of its own a turn
 * of the event loop apart (a large restore's parts: history-undo.ts undoRest).
 */
export type LiveWrite = <T>(
  room: string,
  context: Record<string, unknown>,
  edit: (fragment: Y.XmlFragment) => Result<T>,
  rest?: ReadonlyArray<(fragment: Y.XmlFragment) => void>,
) => Promise<Result<T>>

export type HistoryActionDeps = {
  history: {
    /** The versions after a point, oldest first, each state as bytes or base64 text (read in slices). */
    versionsAfter(
      documentId: string,
      since: Parameters<History['versionsAfter']>[1],
      limit: number,
    ): Promise<Array<VersionInfo & { state: Uint8Array | string }>>
    /** The version a lookup names, its state as bytes or base64 text (history.ts findVersionState: bytes). */
    findVersion(
      documentId: string,
      lookup: Parameters<History['findVersion']>[1],
    ): Promise<(VersionInfo & { state: Uint8Array | string }) | null>
  }
  write: LiveWrite
  /**
   * Takes the named "before" version of the document as it is now: what the live document (when loaded
   * here) has unstored is stored, then the stored content is merged and written off the event loop
   * (history-before.ts), with `user`'s share of the documents' worker. Its state is what the edit is
   * worked out against.
   */
  saveBefore(
    user: string,
    document: DocumentRow,
    name: string,
    known?: KnownVersion,
  ): Promise<Result<BeforeVersion>>
  /** Works out the edit off the event loop (the documents' worker), with `user`'s share of it. */
  planUndo(user: string, input: UndoInput): Promise<Result<UndoPlan>>
}

/**
 * Who acts: their user id (their share of the documents' worker) and the context their writer passes
 * with the edit (its principal attributes it).
 */
export type Actor = { user: string; context: Record<string, unknown> }

export type ActionOutcome = {
  /** The version taken just before, of the document as it was: restoring it undoes this action. */
  beforeVersionId: bigint
  /** Whether the document changed (a restore of content already equal to the version's does not). */
  changed: boolean
  /** For an author's revert: the versions whose changes were undone. */
  reverted: bigint[]
}

/** Authors a refusal names per version that mixes them (the count of the rest follows). */
export const MAX_NAMED_MIXED_AUTHORS = 5

/** Which author's changes: a handle, and the app (an API token's label or an OAuth app's name). */
export type AuthorFilter = { handle: string; app?: string }

function withAction(actor: Actor, action: 'restore' | 'revert'): Record<string, unknown> {
  return { ...actor.context, history: { ...(actor.context.history ?? {}), action } }
}

type Before = BeforeVersion

/**
 * The "before" version (history-before.ts): the document as it is now, as a named version. `read`: the
 * newest version the action read already (its summary is against the newest), not read again.
 */
function beforeVersion(
  deps: HistoryActionDeps,
  document: DocumentRow,
  name: string,
  actor: Actor,
  read?: { id: bigint; state: Uint8Array | string },
): Promise<Result<Before>> {
  const known = read && read.state instanceof Uint8Array ? { id: read.id, state: read.state } : undefined
  return deps.saveBefore(actor.user, document, name, known)
}

/** Works out the edit against the "before" state on the worker, then applies it if it is still right. */
async function undoOnLive(
  deps: HistoryActionDeps,
  document: DocumentRow,
  actor: Actor,
  action: 'restore' | 'revert',
  before: Before,
  input: Omit<UndoInput, 'live'>,
): Promise<Result<{ changed: boolean }>> {
  const plan = await deps.planUndo(actor.user, { ...input, live: before.state })
  if (plan.kind === 'error') return plan
  // A large edit (a restore of much) comes in parts: the first applied after the checks, the rest after it.
  return deps.write(
    document.room,
    withAction(actor, action),
    (fragment) => applyUndoPlan(fragment, plan.value, input.field),
    undoRest(plan.value),
  )
}

function versionNotFound(slug: string, id: bigint, field: string) {
  return refuse(
    'not_found',
    `${field}: no version ${id} of "${slug}" is kept (older versions are thinned: docs/history.md); list_versions names the versions kept.`,
    field,
  )
}

type FoundVersion = VersionInfo & { state: Uint8Array | string }

/**
 * An action on one kept version of a document (a restore, a revert): called with the version's id, it finds
 * the version (a not_found refusal naming `field` when it is not kept) and runs `act` on it.
 */
function onKeptVersion(
  act: (
    deps: HistoryActionDeps,
    document: DocumentRow,
    versionId: bigint,
    version: FoundVersion,
    actor: Actor,
    field: string,
  ) => Promise<Result<ActionOutcome>>,
) {
  return async (
    deps: HistoryActionDeps,
    document: DocumentRow,
    versionId: bigint,
    actor: Actor,
    field = 'version_id',
  ): Promise<Result<ActionOutcome>> => {
    const version = await deps.history.findVersion(document.id, { id: versionId })
    if (!version) return versionNotFound(document.slug, versionId, field)
    return act(deps, document, versionId, version, actor, field)
  }
}

/** Makes the document's content equal version `versionId`'s, as one edit. */
export const restoreVersion = onKeptVersion(async (deps, document, versionId, version, actor, field) => {
  const large = tooLarge(version.byteSize, field, `version ${versionId}`)
  if (large) return large
  const before = await beforeVersion(deps, document, `Before restore of version ${versionId}`, actor, version)
  if (before.kind === 'error') return before
  const applied = await undoOnLive(deps, document, actor, 'restore', before.value, {
    base: version.state,
    steps: [],
    checkConflicts: false,
    trackLive: true,
    field,
  })
  if (applied.kind === 'error') return applied
  return ok({ beforeVersionId: before.value.id, changed: applied.value.changed, reverted: [versionId] })
})

/** Undoes what version `versionId` changed (since the version before it), keeping later changes. */
export const revertVersion = onKeptVersion(async (deps, document, versionId, version, actor, field) => {
  const base = await deps.history.findVersion(document.id, { before: versionId })
  if (!base)
    return refuse(
      'invalid_input',
      `${field}: version ${versionId} is the oldest version kept of "${document.slug}": there is no version before it to compare with, so what it changed is unknown. Revert a later version, or restore_version one.`,
      field,
    )
  for (const { byteSize, id } of [version, base]) {
    const large = tooLarge(byteSize, field, `version ${id}`)
    if (large) return large
  }
  const before = await beforeVersion(deps, document, `Before revert of version ${versionId}`, actor, version)
  if (before.kind === 'error') return before
  // The "before" version (and any taken since) follow the reverted one: others' changes, not undone.
  const applied = await undoOnLive(deps, document, actor, 'revert', before.value, {
    base: base.state,
    steps: [{ state: version.state, tracked: true }],
    checkConflicts: true,
    field,
  })
  if (applied.kind === 'error') return applied
  return ok({ beforeVersionId: before.value.id, changed: applied.value.changed, reverted: [versionId] })
})

/** Longest `since_time` accepted (an ISO 8601 time with fractions and an offset is ~30 characters). */
export const MAX_SINCE_TIME_CHARS = 40

/** A revert's `since_time`: an ISO 8601 time (with a date), or a refusal naming `field` and an example. */
export function sinceTimeOf(raw: string, field = 'since_time'): Result<Date> {
  const at = new Date(raw)
  if (!/^\d{4}-\d{2}-\d{2}/.test(raw) || raw.length > MAX_SINCE_TIME_CHARS || Number.isNaN(at.getTime()))
    return refuse(
      'invalid_input',
      `${field}: "${raw.slice(0, MAX_SINCE_TIME_CHARS)}" is not an ISO 8601 time; pass one such as 2026-12-01T09:30:00Z (the changes after the newest version taken at or before it are undone).`,
      field,
    )
  return ok(at)
}

function authorsNamed(authors: readonly Author[]): string {
  const named = authors.slice(0, MAX_NAMED_MIXED_AUTHORS).map((author) => describeAuthor(author))
  const more = authors.length - named.length
  return `${named.join('; ')}${more > 0 ? `; and ${more} more` : ''}`
}

function matches(author: Author, filter: AuthorFilter): boolean {
  if ((author.h ?? author.u) !== filter.handle) return false
  return filter.app === undefined || author.a === filter.app
}

function filterText(filter: AuthorFilter): string {
  return filter.app === undefined ? `${filter.handle}'s` : `${filter.handle}'s (app "${filter.app}")`
}

/**
 * The versions after `afterId` as undo steps: those whose authors are all the author's are tracked (their
 * changes undone), the others kept; `walked` versions were taken already, so at most MAX_REVERT_VERSIONS
 * minus that many may follow. Refused when more follow, when one is past MAX_HISTORY_STATE_BYTES, or when
 * one mixes the author's changes with someone else's.
 */
async function walkAuthor(
  deps: HistoryActionDeps,
  document: DocumentRow,
  filter: AuthorFilter,
  afterId: bigint,
  walked: number,
  sinceField: string,
): Promise<Result<{ steps: UndoStep[]; reverted: bigint[]; lastId: bigint }>> {
  const room = MAX_REVERT_VERSIONS - walked
  const versions = await deps.history.versionsAfter(document.id, { afterId }, room + 1)
  if (versions.length > room)
    return refuse(
      'invalid_input',
      `${sinceField}: more than ${MAX_REVERT_VERSIONS} versions follow it; a revert walks at most ${MAX_REVERT_VERSIONS}. Pass a later since_version (list_versions names them).`,
      sinceField,
    )
  const mixed: VersionInfo[] = []
  const steps: UndoStep[] = []
  const reverted: bigint[] = []
  for (const version of versions) {
    const large = tooLarge(Number(version.byteSize), sinceField, `version ${version.id}`)
    if (large) return large
    const authors = Array.isArray(version.authors) ? version.authors : []
    const theirs = authors.filter((author) => matches(author, filter))
    const tracked = theirs.length > 0 && theirs.length === authors.length
    if (theirs.length > 0 && !tracked) mixed.push(version)
    if (tracked) reverted.push(version.id)
    steps.push({ state: version.state, tracked })
  }
  if (mixed.length > 0) {
    const named = mixed
      .slice(0, 5)
      .map((v) => `version ${v.id} (${v.createdAt.toISOString()}: ${authorsNamed(v.authors)})`)
      .join(', ')
    return refuse(
      'conflict',
      `author: ${filterText(filter)} changes share ${mixed.length === 1 ? 'a version' : `${mixed.length} versions`} with other people's, which history cannot split by author: ${named}${mixed.length > 5 ? ', …' : ''}. Revert such a version whole with version_id, or restore_version the version before it.`,
      'author',
    )
  }
  return ok({ steps, reverted, lastId: versions.at(-1)?.id ?? afterId })
}

/**
 * Undoes the changes of one author (a handle, and an app) since a version or a time: the versions from
 * then on whose authors are all that author are undone together, every other version's changes kept. A
 * version that mixes the author's changes with someone else's cannot be split by author and is named in a
 * refusal (revert it by version_id, which undoes all of it, or restore a version).
 */
export async function revertAuthor(
  deps: HistoryActionDeps,
  document: DocumentRow,
  filter: AuthorFilter,
  since: { versionId: bigint } | { at: Date },
  actor: Actor,
): Promise<Result<ActionOutcome>> {
  const sinceField = 'versionId' in since ? 'since_version' : 'since_time'
  // The version the changes start from: the since version itself, or the newest at or before the time.
  const base = await deps.history.findVersion(
    document.id,
    'versionId' in since ? { id: since.versionId } : { at: since.at },
  )
  if (!base)
    return 'versionId' in since
      ? versionNotFound(document.slug, since.versionId, sinceField)
      : refuse(
          'not_found',
          `since_time: no version of "${document.slug}" at or before ${since.at.toISOString()} is kept; list_versions names the versions kept.`,
          sinceField,
        )
  // What is already kept is walked first, so a revert refused for it leaves no "Before" version behind.
  const kept = await walkAuthor(deps, document, filter, base.id, 0, sinceField)
  if (kept.kind === 'error') return kept
  // The document as it is now becomes a version, so the author's latest changes are in the walk: only
  // what follows the kept versions is read again.
  // The newest version read: the last kept one, or the since version itself.
  const last = kept.value.steps.at(-1)
  const read = last ? { id: kept.value.lastId, state: last.state } : base
  const before = await beforeVersion(
    deps,
    document,
    `Before revert of ${filterText(filter)} changes`,
    actor,
    read,
  )
  if (before.kind === 'error') return before
  const fresh = await walkAuthor(
    deps,
    document,
    filter,
    kept.value.lastId,
    kept.value.steps.length,
    sinceField,
  )
  if (fresh.kind === 'error') return fresh
  const steps = [...kept.value.steps, ...fresh.value.steps]
  const reverted = [...kept.value.reverted, ...fresh.value.reverted]
  if (reverted.length === 0)
    return refuse(
      'not_found',
      `author: no change by ${filterText(filter)} since version ${base.id} is recorded; list_versions names each version's authors and apps.`,
      'author',
    )
  const applied = await undoOnLive(deps, document, actor, 'revert', before.value, {
    base: base.state,
    steps,
    checkConflicts: true,
    field: 'author',
  })
  if (applied.kind === 'error') return applied
  return ok({ beforeVersionId: before.value.id, changed: applied.value.changed, reverted })
}
