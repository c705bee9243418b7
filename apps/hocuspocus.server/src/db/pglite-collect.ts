/**
 * The embedded database's thread collects its garbage after every PGLITE_COLLECT_AFTER_BYTES of protocol
 * traffic (pglite-worker.ts).
 */
import type { PGlite } from '@electric-sql/pglite'

/**
 * Protocol bytes (statements in, answers out) after which this thread collects its garbage. Each message
 * is copied a few times on its way in and out of PGlite (the socket's buffers, a copy for the WebAssembly
 * heap, the answer's chunks): outside the JavaScript heap, which stays small, so the collector seldom runs
 * on its own (in one process, writing a 22 MB state in slices left ~180 MB of buffers that a full
 * collection gave back). The red team's export of a 20 MiB document, which reads that state, grew the
 * server +148 / +172 / +186 MiB without this and +124 / +142 / +144 with it (interleaved, PGlite); its
 * import did not move (+218–231 against +209–247: that peak is not here). A full collection of this
 * thread's small heap takes a few ms, on this thread only. Every 4 MiB rather than 16 since 2026-12-06:
 * writing a 22 MB state in parts (with the event loop's own collections, statement-history.ts) grew the
 * process +94–104 MiB at 16 MiB and +57–66 at 4, the writes ~10% slower on this thread (bench/zz runs,
 * three rounds each).
 */
export const PGLITE_COLLECT_AFTER_BYTES = 4 * 1024 * 1024

/** Counts the protocol bytes through `database` and collects once PGLITE_COLLECT_AFTER_BYTES have passed. */
export function collectAfterTraffic(
  database: PGlite,
  /** How to collect (tests count the calls). */
  collect: () => void = () => Bun.gc(true),
): void {
  const exec = database.execProtocolRawStream.bind(database)
  let passed = 0
  let scheduled = false
  database.execProtocolRawStream = async (message, options) => {
    passed += message.byteLength
    const onRawData = options?.onRawData
    try {
      await exec(
        message,
        onRawData
          ? {
              ...options,
              onRawData: (data: Uint8Array) => {
                passed += data.byteLength
                onRawData(data)
              },
            }
          : options,
      )
    } finally {
      if (passed >= PGLITE_COLLECT_AFTER_BYTES && !scheduled) {
        passed = 0
        scheduled = true
        // After the answer is on its way, between statements.
        setTimeout(() => {
          scheduled = false
          collect()
        }, 0)
      }
    }
  }
}
