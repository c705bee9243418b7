import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm'
/**
 * The PostgreSQL extensions a migration may create, loaded into every embedded database (PostgreSQL
 * ships them as contrib): pg_trgm indexes the phrase match of find_documents and find_sections.
 */
export const PGLITE_EXTENSIONS = { pg_trgm }
