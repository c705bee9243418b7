/** A job posted to the documents' worker with its bytes transferred, not cloned (pool.ts posts it). */
import type { WorkerJob } from './jobs.ts'

/** Plain objects and arrays of a job's input walked this deep for its bytes (its deepest is 2). */
const MAX_JOB_DEPTH = 4

/**
 * A job as posted, with every Uint8Array of its input in a buffer the post transfers: posted as they are,
 * Bun's structured clone copied typed arrays on the event loop at ~50 ms per MiB (an 8 MiB state ~0.4 s
 * in one piece, measured), where a copy of our own is a memcpy and a transfer costs nothing. `own`: the
 * caller gives its arrays away (an export's, read for the job alone), so those owning their buffer whole
 * are transferred as they are (and empty for the caller after); any other array is copied first, as the
 * caller may still read it.
 */
export function transferable(job: WorkerJob, own: boolean): { job: WorkerJob; transfer: ArrayBuffer[] } {
  const transfer = new Set<ArrayBuffer>()
  const walk = (value: unknown, depth: number): unknown => {
    if (value instanceof Uint8Array) {
      const whole = value.byteOffset === 0 && value.byteLength === value.buffer.byteLength
      const bytes = own && whole && !transfer.has(value.buffer as ArrayBuffer) ? value : value.slice()
      transfer.add(bytes.buffer as ArrayBuffer)
      return bytes
    }
    if (depth >= MAX_JOB_DEPTH || value === null || typeof value !== 'object') return value
    if (Array.isArray(value)) return value.map((item) => walk(item, depth + 1))
    if (Object.getPrototypeOf(value) !== Object.prototype) return value
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, walk(item, depth + 1)]))
  }
  return { job: walk(job, 0) as WorkerJob, transfer: [...transfer] }
}
