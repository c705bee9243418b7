/**
 * Real Markdown files in and out (issue 12), without a server: `doc import` and `doc export` open the
 * database themselves. The cases are in import-export-cases.ts; import-export-server.test.ts runs them
 * while the server runs.
 */
import { describeImportExport } from './import-export-cases.ts'

describeImportExport(false)
