/**
 * The documents' worker thread (a Bun Worker, started by pool.ts): one heavy job at a time, posted back with
 * large buffers transferred rather than copied. Jobs: `import` builds a Markdown file (import.ts); `export`
 * renders stored content as Markdown, in pieces (export.ts); `compact` merges stored content for a compaction (compact.ts);
 * `undo` works out a restore's or revert's edit (../history-undo.ts planUndo); `before` merges the stored
 * content into its "before" version (compact.ts, with the summary, outline and the state's bytes); `split`
 * cuts a large stored document into parts the event loop loads one at a time (split.ts); `first-screen` the
 * first blocks of a large stored document as HTML for its web page (first-screen.ts); `read` the start of a
 * document's Markdown for a whole read whose render is dear (read.ts); `read-live` the same for a live
 * document, on a copy kept here between reads and sent only what changed (read.ts renderLivePrefix), or a
 * section read on that copy (read-section.ts); `derive` a stored
 * document's heading ids or title and search text (derive.ts).
 */
import { ok } from '@collab/doc-schema'
import { planUndo } from '../history-undo.ts'
import { compactStored } from './compact.ts'
import { deriveStored } from './derive.ts'
import { renderExport } from './export.ts'
import { renderFirstScreen } from './first-screen.ts'
import { buildImport } from './import.ts'
import { jobBytes, LARGE_JOB_BYTES, type WorkerJob, type WorkerReply } from './jobs.ts'
import { renderLivePrefix, renderReadPrefix } from './read.ts'
import { splitStored } from './split.ts'
import { answerSync } from './sync-answer.ts'
import { beforeVersionOf } from './worker-jobs.ts'

declare const self: Worker

/**
 * From this many characters of Markdown an import collects its garbage between its phases (parse, build,
 * outline) and within them: a full collection of a small heap costs a few ms, and a 20 MiB file's phases
 * each leave hundreds of MB of garbage that the next phase would otherwise add to. Bytes say little of the
 * cost: the element ceiling is reached by 0.5 MB (a list of 75,000 one-word items), whose worker peaked
 * +522 MB without the collections and ~+400 MB with them.
 */
const COLLECT_FROM_CHARS = 64 * 1024

self.onmessage = (event: MessageEvent<WorkerJob>) => {
  const job = event.data
  let reply: WorkerReply
  const transfer: ArrayBuffer[] = []
  // Word to the pool that this job is getting on (pool.ts: its deadline without progress starts again).
  const progress = () => self.postMessage({ id: job.id, progress: true } satisfies WorkerReply)
  try {
    if (job.kind === 'import') {
      const large = job.input.markdown.length >= COLLECT_FROM_CHARS
      const result = large
        ? buildImport(
            job.input,
            job.maxTextChars,
            () => {
              Bun.gc(true) // between phases, and every COLLECT_EVERY_BLOCKS blocks built
              progress()
            },
            () => Bun.gc(false),
          )
        : buildImport(job.input, job.maxTextChars)
      if (result.kind === 'ok') transfer.push(result.value.state.buffer as ArrayBuffer)
      reply = { id: job.id, result }
    } else if (job.kind === 'compact') {
      const compacted = compactStored(
        job.input,
        jobBytes(job) >= LARGE_JOB_BYTES ? () => Bun.gc(true) : undefined,
      )
      transfer.push(compacted.state.buffer as ArrayBuffer, compacted.vector.buffer as ArrayBuffer)
      reply = { id: job.id, result: ok(compacted) }
    } else if (job.kind === 'undo') {
      const result = planUndo(job.input)
      if (result.kind === 'ok')
        transfer.push(
          ...new Set(result.value.edit.map((part) => part.buffer as ArrayBuffer)),
          result.value.deleted.buffer as ArrayBuffer,
        )
      reply = { id: job.id, result }
    } else if (job.kind === 'before') {
      const result = beforeVersionOf(job.input)
      if (result.kind === 'ok')
        transfer.push(result.value.state.buffer as ArrayBuffer, result.value.vector.buffer as ArrayBuffer)
      reply = { id: job.id, result }
    } else if (job.kind === 'split') {
      const parts = splitStored(job.input)
      transfer.push(...new Set(parts.map((part) => part.buffer as ArrayBuffer)))
      reply = { id: job.id, result: ok(parts) }
    } else if (job.kind === 'derive') reply = { id: job.id, result: ok(deriveStored(job.input)) }
    else if (job.kind === 'read') reply = { id: job.id, result: ok(renderReadPrefix(job.input)) }
    else if (job.kind === 'read-live') reply = { id: job.id, result: ok(renderLivePrefix(job.input)) }
    else if (job.kind === 'sync-answer') {
      const answer = answerSync(job.input)
      // The merged parts the worker keeps share no buffer with these: a diff and a vector are new arrays.
      if (!answer.stale)
        transfer.push(answer.message.buffer as ArrayBuffer, answer.covered.buffer as ArrayBuffer)
      reply = { id: job.id, result: ok(answer) }
    } else if (job.kind === 'first-screen')
      reply = { id: job.id, result: ok(renderFirstScreen(job.stored, job.limits)) }
    else {
      // Each piece goes to the pool as it is made (its buffer transferred; progress too), so this thread
      // never holds the file. A large document's blocks, written, are garbage: collected piece by piece,
      // the worker's peak is the document rather than also every block's JSON and syntax tree.
      const large = jobBytes(job) >= LARGE_JOB_BYTES
      const file = renderExport(job.stored, {
        // The state (transferred: this thread's alone) and its decoding's garbage go before the render.
        applied: large ? () => Bun.gc(true) : undefined,
        collect: large ? () => Bun.gc(false) : undefined,
        emit: (piece) =>
          self.postMessage({ id: job.id, piece } satisfies WorkerReply, [piece.buffer as ArrayBuffer]),
      })
      reply = { id: job.id, result: ok(file) }
    }
  } catch (error) {
    reply = { id: job.id, crashed: error instanceof Error ? error.message : String(error) }
  }
  self.postMessage(reply, transfer)
}
