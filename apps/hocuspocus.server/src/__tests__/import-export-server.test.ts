/**
 * Real Markdown files in and out (issue 12), while the server runs (in this process): each command runs
 * inside it (the admin channel). The cases are in import-export-cases.ts; import-export.test.ts runs a
 * real file's import and export without a server.
 */
import { describeImportExport } from './import-export-cases.ts'

describeImportExport(true)
