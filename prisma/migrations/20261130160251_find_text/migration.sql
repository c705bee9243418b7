-- pg_trgm: trigram indexes for the phrase match of find_documents and find_sections. PGlite loads it
-- from @electric-sql/pglite/contrib, PostgreSQL ships it as contrib (a trusted extension).
CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- AlterTable
ALTER TABLE "documents" ADD COLUMN     "search_text" TEXT;

-- CreateIndex
CREATE INDEX "documents_search_text_idx" ON "documents" USING GIN ("search_text" gin_trgm_ops);
