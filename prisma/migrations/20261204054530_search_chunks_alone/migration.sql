-- Chunks that are their document's only one (`alone`, most documents) and chunks of longer documents get
-- disjoint partial indexes (documents/search-rank.ts): a search finds one-chunk documents holding all its
-- terms in one index scan (a term in no document ends it at once), and checks the other chunks of a
-- document only for chunks of longer documents. Before, every chunk holding the longest term was read
-- and its text matched: a common word with a word in no document took 1.4 s over 40,000 documents.
-- The indexes are built again here (~14 s for 40,000 documents of 2,000 characters on PostgreSQL).
-- DropIndex
DROP INDEX "document_search_chunks_body_idx";

-- DropIndex
DROP INDEX "document_search_chunks_stem_idx";

-- AlterTable: every existing chunk alone, then the chunks of documents with several marked (a default
-- for the existing rows only: the writer always says).
ALTER TABLE "document_search_chunks" ADD COLUMN     "alone" BOOLEAN NOT NULL DEFAULT true;

UPDATE "document_search_chunks" c SET "alone" = false
 WHERE EXISTS (SELECT 1 FROM "document_search_chunks" x WHERE x."document_id" = c."document_id" AND x."key" <> c."key");

ALTER TABLE "document_search_chunks" ALTER COLUMN "alone" DROP DEFAULT;

-- CreateIndex
CREATE INDEX "document_search_chunks_body_idx" ON "document_search_chunks" USING GIN ("body" gin_trgm_ops) WHERE (alone);

-- CreateIndex
CREATE INDEX "document_search_chunks_stem_idx" ON "document_search_chunks" USING GIN ("stem") WHERE (alone);

-- CreateIndex
CREATE INDEX "document_search_chunks_parts_body_idx" ON "document_search_chunks" USING GIN ("body" gin_trgm_ops) WHERE (NOT alone);

-- CreateIndex
CREATE INDEX "document_search_chunks_parts_stem_idx" ON "document_search_chunks" USING GIN ("stem") WHERE (NOT alone);
