/**
 * What the documents' worker pool (pool.ts) says when it refuses a job, per kind of job: the field the
 * refusal names, what the user's earlier job of that kind is (the fair share: one waiting or running per
 * user and kind), and what to do when the job ran past its deadline.
 */
import { MAX_WAITING_WHOLE_READS_PER_USER } from '../../limits.ts'
import type { Job } from './jobs.ts'

type Kind = Job['kind']

/** What each kind says when refused: its field, what the user's earlier job is, what to do. */
export const WORDING: Record<Kind, { field: string; busy: string; slow: string }> = {
  import: {
    field: 'markdown',
    busy: 'markdown: an import of yours is still being built; wait for its answer, then send the next file.',
    slow: 'split the file into several smaller documents',
  },
  export: {
    field: 'slug',
    busy: 'slug: an export of yours is still being written; wait for it, then ask for the next one.',
    slow: 'read the document in sections instead (get_outline, read_document with section_id)',
  },
  // The server's own job (no person waits on it): a refusal leaves the log as it is for the next try.
  compact: {
    field: 'document',
    busy: 'document: a compaction of it is already under way.', // never said: no share applies
    slow: 'its log stays as it is and is merged at the next compaction',
  },
  before: {
    field: 'slug',
    busy: 'slug: a version of yours is still being taken; wait for its answer, then send the next.',
    slow: 'edit the document by sections instead',
  },
  // The server's own job, like compact: a refusal loads the document on the event loop instead.
  split: {
    field: 'document',
    busy: 'document: it is already being split for its load.', // never said: no share applies
    slow: 'it is loaded whole instead',
  },
  // Never said to anyone: the page is then served without its first screen.
  'first-screen': {
    field: 'slug',
    busy: "slug: the documents' worker is busy; the page opens without its first screen.",
    slow: 'the page opens without its first screen',
  },
  // Never said to anyone: Hocuspocus then answers the editor's sync on the event loop, as before.
  'sync-answer': {
    field: 'document',
    busy: "document: the documents' worker is busy; the sync is answered here.",
    slow: 'the sync is answered on the event loop',
  },
  read: {
    field: 'slug',
    busy: `slug: ${MAX_WAITING_WHOLE_READS_PER_USER} whole reads of yours are waiting to be rendered; wait for their answers, then read again (or read by sections).`,
    slow: 'read the document in sections instead (get_outline, read_document with section_id)',
  },
  get 'read-live'() {
    return WORDING.read
  },
  // The server's own job, like compact: a refusal is handled by its caller (derive.ts says which).
  derive: {
    field: 'document',
    busy: 'document: it is already being read.', // never said: no share applies
    slow: 'it is read again later',
  },
  undo: {
    field: 'slug',
    busy: 'slug: a restore or revert of yours is still being worked out; wait for its answer, then send the next.',
    slow: 'restore a whole version (less work than a revert), or edit the document by sections',
  },
}

/**
 * What a section read (rendered on the worker: read-section.ts) is told when refused: it waits in the same
 * line as its user's whole reads, so the whole read's wording ("or read by sections") would mislead it.
 */
export const SECTION_READS_BUSY = `slug: ${MAX_WAITING_WHOLE_READS_PER_USER} reads of yours, whole or of sections, are waiting to be rendered; wait for their answers, then read again.`
