/**
 * Prisma's options for a transaction that writes a document's content (a new or imported document, a
 * compaction). Prisma ends an interactive transaction after 5 s and gives up waiting for a connection after
 * 2 s; this work is bounded by the document size limit, not by anyone's think time, and ending it late
 * wastes all of it: a 20 MiB import on a busy machine ran 5.1 s and the command failed. On PGlite (one
 * connection) a create can also wait behind a running compaction.
 */
export const CONTENT_TRANSACTION = { maxWait: 10_000, timeout: 30_000 }
