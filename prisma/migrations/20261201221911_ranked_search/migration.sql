-- Ranked search (documents/search.ts): the title and text stemmed by the 'english' configuration, beside
-- search_vector ('simple', words as written) and search_text (trigrams, terms as written). Existing rows
-- get it from the search backfill at the next start (documents/search-backfill.ts).
-- AlterTable
ALTER TABLE "documents" ADD COLUMN     "search_stem" tsvector;

-- CreateIndex
CREATE INDEX "documents_search_stem_idx" ON "documents" USING GIN ("search_stem");
