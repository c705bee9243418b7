-- Search text in chunks (documents/search-chunks.ts): the title and text move from one documents row
-- (search_text, search_stem: a million characters re-indexed at every refresh, ~0.12 s of trigrams alone
-- on PGlite) to document_search_chunks, where a refresh rewrites only the chunks an edit changed.
-- search_vector keeps the title and headings for the rank, without its index (it never matched).
-- Existing documents get their chunks from the search backfill at the next start
-- (documents/search-backfill.ts: every document without a chunk).
-- DropIndex
DROP INDEX "documents_search_stem_idx";

-- DropIndex
DROP INDEX "documents_search_text_idx";

-- DropIndex
DROP INDEX "documents_search_vector_idx";

-- AlterTable
ALTER TABLE "documents" DROP COLUMN "search_stem",
DROP COLUMN "search_text";

-- CreateTable
CREATE TABLE "document_search_chunks" (
    "document_id" UUID NOT NULL,
    "key" TEXT NOT NULL,
    "n" INTEGER NOT NULL,
    "prefix_chars" INTEGER NOT NULL,
    "body" TEXT NOT NULL,
    "stem" tsvector NOT NULL,
    "words" tsvector NOT NULL,

    CONSTRAINT "document_search_chunks_pkey" PRIMARY KEY ("document_id","key")
);

-- CreateIndex
CREATE INDEX "document_search_chunks_body_idx" ON "document_search_chunks" USING GIN ("body" gin_trgm_ops);

-- CreateIndex
CREATE INDEX "document_search_chunks_stem_idx" ON "document_search_chunks" USING GIN ("stem");

-- AddForeignKey
ALTER TABLE "document_search_chunks" ADD CONSTRAINT "document_search_chunks_document_id_fkey" FOREIGN KEY ("document_id") REFERENCES "documents"("id") ON DELETE CASCADE ON UPDATE CASCADE;
