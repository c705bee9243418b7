/**
 * Loaded before the tests (bunfig.toml `[test] preload`), so plain `bun test`, `bun test <folder>` and
 * `bun run test` all run with the same timeout. Bun reads the bunfig.toml of the folder it runs in, so each
 * workspace package has one that points here: `bun test` inside a package runs with it too.
 *
 * `setDefaultTimeout` is file-scoped in Bun, and a preload runs once per run: called here alone, it
 * reaches only the first test file (oven-sh/bun#43787; Bun 1.4.5 does not read `[test] timeout` either).
 * So the preload also makes every test file call it first, through a loader plugin that puts the call in
 * front of the file's first line (line numbers in stack traces stay right).
 */

import { setDefaultTimeout } from 'bun:test'
import { readFileSync } from 'node:fs'
import { plugin } from 'bun'

/**
 * How long one test or hook may run. Integration tests start real servers, databases and processes;
 * property tests draw many cases. Bun's default (5 s) cut them on a loaded machine.
 */
export const TEST_TIMEOUT_MS = 60_000

setDefaultTimeout(TEST_TIMEOUT_MS)

plugin({
  name: 'default test timeout in every file',
  setup(build) {
    build.onLoad({ filter: /\.test\.ts$/ }, ({ path }) => ({
      loader: 'ts',
      contents: `import { setDefaultTimeout as setFileTimeout } from 'bun:test'; setFileTimeout(${TEST_TIMEOUT_MS});${readFileSync(path, 'utf8')}`,
    }))
  },
})
