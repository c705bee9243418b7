/**
 * Preloaded into each server the bench measures (ours and the peer, BUN_OPTIONS=--preload): on SIGUSR2 the
 * process runs a full synchronous collection of its main thread's heap (other threads' heaps are left as
 * they are). * The memory rows read RSS after one in every contender alike, so a per-document figure is what the
 * documents hold, not garbage one server has not collected yet. Nothing else changes how a server runs.
 */
import { isMainThread } from 'node:worker_threads'

if (isMainThread) {
  process.on('SIGUSR2', () => {
    Bun.gc(true)
  })
}
