/**
 * Prisma's options for a transaction that writes a document's content (a new or imported document, a
 * compaction). Prisma ends an interactive transaction after 5 s and gives up waiting for a connection after
 * 2 s; this work is bounded by the document size limit, not by anyone's think time, and ending it late
 * wastes all of it: a 20 MiB import on a busy machine ran 5.1 s and the command failed. On PGlite (one
 * connection) a create can also wait behind a running compaction.
 */
export const CONTENT_TRANSACTION = { maxWait: 10_000, timeout: 30_000 }

/**
 * Prisma's options for a search statement run in a transaction of its own (documents/search.ts
 * throughIndexes, for its planner setting): the statement is bounded by the search's own ceilings, and on
 * PGlite it can wait behind a running compaction or import, as a content transaction can.
 */
export const SEARCH_TRANSACTION = CONTENT_TRANSACTION
