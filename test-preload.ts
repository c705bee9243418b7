/**
 * Loaded before every test file (bunfig.toml `[test] preload`), so plain `bun test` and `bun run test`
 * run with the same timeout.
 */
import { setDefaultTimeout } from 'bun:test'

/**
 * How long one test or hook may run. Integration tests start real servers and databases and real
 * processes; property tests draw many cases. Bun's default (5 s) cut them on a loaded machine.
 */
export const TEST_TIMEOUT_MS = 60_000

setDefaultTimeout(TEST_TIMEOUT_MS)
