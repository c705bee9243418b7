/**
 * A 20 MiB Markdown file in one `doc import` and out whole, without a server: the CLI opens the database
 * itself. The slow tier (`bun run test:slow`); the case is in import-export-cases.ts, and
 * import-large-server.slow.test.ts runs it while a server runs.
 */
import { describeLargeImport } from './import-export-cases.ts'

describeLargeImport(false)
