/**
 * Moved behind the documents service (documents/search.ts, `services.search`). This re-export keeps the
 * module's imports working until they point there; delete it then.
 */
export * from '../../../documents/search.ts'
