/**
 * Real Markdown files in and out (issue 12), without a server: `doc import` and `doc export` open the
 * database themselves (a real file in and out, with the only user as its owner). The cases are in
 * import-export-cases.ts; import-export-server.test.ts runs them while the server runs, with the ones
 * that check only the command's own rules (stability, --title, refusals), which run the same code here.
 */
import { describeImportExport } from './import-export-cases.ts'

describeImportExport(false)
