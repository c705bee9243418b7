/**
 * A 20 MiB Markdown file in one `doc import` and out whole, while the server runs: the command runs
 * inside it (the admin channel). The slow tier (`bun run test:slow`); the case is in
 * import-export-cases.ts, and import-large.slow.test.ts runs it without a server.
 */
import { describeLargeImport } from './import-export-cases.ts'

describeLargeImport(true)
