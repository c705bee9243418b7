/**
 * Prisma remembers the arguments of its last 100 debug messages whether or not debugging is on (each copy
 * of @prisma/debug keeps a module-level history for its error reports), and two of its messages per raw
 * statement carry the statement's parameters: the client runtime's `prisma.$executeRaw(<sql>, <values as
 * JSON>)` and the driver adapter's `[js::query_raw] %O` of the query with its arguments. So the parameters
 * of the last ~100 statements stay reachable after they ran: after a 20 MiB import wrote its 22 MB state in
 * slices of 256 KiB, ~75 MB of the event loop's heap stayed held through a full collection (a heap snapshot),
 * until a hundred later statements pushed them out; an 8 MiB update appended to the log, or a search text of
 * a million characters, is held the same way.
 *
 * `forgetLargeParameters` empties those histories after a statement whose parameters are large. Three
 * histories, one per copy of @prisma/debug the server runs:
 * - @prisma/adapter-pg's (PostgreSQL, and PGlite on its own thread, the default): @prisma/debug 7.10.1
 *   through @prisma/driver-adapter-utils 7.10.1, imported here as `@prisma/debug`, pinned to that version;
 * - pglite-prisma-adapter's (PGLITE_THREAD=main): @prisma/debug 7.2.0 through driver-adapter-utils 7.2.0,
 *   imported under the alias `prisma-debug-pglite-adapter`, pinned likewise;
 *   both resolve to the very files the adapters load (one module instance each) as long as the pins match
 *   the adapters' own dependencies: when an upgrade parts them, `state-write-slices.test.ts` fails;
 * - the client runtime's, bundled inside @prisma/client's runtime and not exported: its `clearLogs` cannot
 *   be reached, so RUNTIME_HISTORY_LENGTH small messages are written through its exported `Debug`, which
 *   push every older one out (skipped when that namespace is being debugged, so no log fills with them).
 *
 * Why this and not the slices' statements sent around Prisma on the adapter's connection: they run inside
 * the content transaction, whose connection Prisma does not expose, and the adapter's own queries log
 * their arguments all the same. Clearing costs ~100 small calls, done only after large parameters.
 */
import { Debug } from '@prisma/client/runtime/client'
import { clearLogs as clearAdapterPgHistory } from '@prisma/debug'
import { clearLogs as clearPgliteAdapterHistory } from 'prisma-debug-pglite-adapter'

/**
 * Characters of a statement's parameters from which the histories are emptied after it. Below it they are
 * left: a hundred statements of at most this much in two histories hold at most ~13 MB, and typing's
 * small appends pay nothing.
 */
export const LARGE_PARAMETER_CHARS = 64 * 1024

/** The client runtime's history length (MAX_ARGS_HISTORY of its bundled @prisma/debug). */
const RUNTIME_HISTORY_LENGTH = 100

const NAMESPACE = 'collab:forget-parameters'
const pushOut = Debug(NAMESPACE)

/** Empties Prisma's debug histories (see the file's header): nothing of earlier statements stays held. */
export function forgetStatementParameters(): void {
  clearAdapterPgHistory()
  clearPgliteAdapterHistory()
  if (Debug.enabled(NAMESPACE)) return
  for (let i = 0; i < RUNTIME_HISTORY_LENGTH; i++) pushOut('-')
}

/**
 * Characters of large statement texts (parameters sent, slices read) after which the event loop asks for a
 * collection. A large statement's text is copied a few times on its way (Prisma turns parameters into JSON
 * and back, the driver into its buffers), mostly outside the JavaScript heap, whose collector then runs
 * seldom: writing a 22 MB state in parts grew the process +80 MiB on PostgreSQL, +150 on PGlite (its thread
 * too, pglite-collect.ts); asking after every 4 Mi characters, +42–49 and +57–63 (bench/zz runs, three
 * rounds each, 2026-12-06), no slower. `Bun.gc(false)` only asks (0.1–0.3 ms on the event loop, measured);
 * the collection runs when the engine next can.
 */
export const COLLECT_AFTER_TEXT_CHARS = 4 * 1024 * 1024

let textSinceCollection = 0

/**
 * Counts `chars` characters of a large statement's text (LARGE_PARAMETER_CHARS or more) and asks for a
 * collection once COLLECT_AFTER_TEXT_CHARS have passed since the last; whether it asked. `collect`: tests.
 */
export function collectAfterLargeText(chars: number, collect: () => void = () => Bun.gc(false)): boolean {
  if (chars < LARGE_PARAMETER_CHARS) return false
  textSinceCollection += chars
  if (textSinceCollection < COLLECT_AFTER_TEXT_CHARS) return false
  textSinceCollection = 0
  collect()
  return true
}

/**
 * After a statement whose parameters held `chars` characters: forgets them when over LARGE_PARAMETER_CHARS
 * (and counts them towards a collection, collectAfterLargeText).
 */
export function forgetLargeParameters(chars: number): void {
  if (chars < LARGE_PARAMETER_CHARS) return
  forgetStatementParameters()
  collectAfterLargeText(chars)
}
