/**
 * Turns of the event loop for work that runs on it in slices: loading a large document in parts, measuring
 * section totals after a store, walking a document's search text and cutting it into chunks, a read that
 * measures a large section, a database read in slices, the parts of a large agent write. Every such job
 * waits for its next slice here.
 *
 * Why one queue (issue 30, the small document's p99 beside a typed 5 MiB one): each job used to yield with
 * its own `setImmediate`. Bun runs every immediate queued before a turn in that turn, so with three jobs
 * under way (a store of a large document starts a measure, a search walk and the chunks) a turn ran three
 * slices back to back; and Hocuspocus sends an editor's change to the others from a `setImmediate` queued
 * when the message is read, which ran after the slices already queued. A keystroke on any other document
 * waited for every job's slice, 16-30 ms, where the peer without this work answers in ~5.
 *
 * Here one slice runs per turn, whoever's it is (the jobs take turns in the order they asked), and the
 * release waits one hop more: it is queued from an immediate, so what the turn's I/O queued (Hocuspocus's
 * broadcast of the change just read) runs first. A message read while a slice runs waits for that slice's
 * end (at most SLICE_MS plus one step); one read in the instant between two turns, when the release is
 * already queued, waits for one slice more. Never for every job's.
 */

/**
 * How long one slice may hold the event loop before its job takes another turn. The peer answers a
 * keystroke in ~5 ms at p99; a message that arrives during a slice waits for what is left of it.
 */
export const SLICE_MS = 4

const waiting: Array<() => void> = []
let scheduled = false

function schedule(): void {
  scheduled = true
  // Two hops: the first runs in the next turn's immediates, beside what that turn's I/O queued, and
  // queues the release after them.
  setImmediate(() => setImmediate(release))
}

function release(): void {
  scheduled = false
  const next = waiting.shift()
  if (waiting.length > 0) schedule()
  next?.()
}

/** Resolves at this job's next turn: after the event loop has read and answered what arrived meanwhile. */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => {
    waiting.push(resolve)
    if (!scheduled) schedule()
  })
}

/** Jobs waiting for a turn: the gauge `collab_event_loop_turns_waiting` (sliced work piling up). */
export function turnsWaiting(): number {
  return waiting.length
}

/**
 * Runs `steps` (a generator that pauses between pieces of its work) to their end, taking a turn
 * (`nextTurn`) whenever SLICE_MS have gone since the last. `afterTurn` runs after each turn and may stop
 * the work (return false: the result is null) or throw (a cancelled call). Returns the steps' value and the
 * time spent running them, not waiting for turns.
 */
export async function runInSlices<T>(
  steps: Iterator<unknown, T>,
  // biome-ignore lint/suspicious/noConfusingVoidType: a check that only throws returns nothing
  afterTurn?: () => boolean | void,
): Promise<{ value: T; busyMs: number } | null> {
  let busyMs = 0
  let sliceStart = performance.now()
  for (;;) {
    const step = steps.next()
    const now = performance.now()
    if (step.done) return { value: step.value, busyMs: busyMs + now - sliceStart }
    if (now - sliceStart < SLICE_MS) continue
    busyMs += now - sliceStart
    await nextTurn()
    if (afterTurn?.() === false) return null
    sliceStart = performance.now()
  }
}
