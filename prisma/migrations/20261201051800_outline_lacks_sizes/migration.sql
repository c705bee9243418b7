-- The outlines a cold get_outline cannot use: none, or a node without a numeric size. The outline
-- backfill (documents/outline-backfill.ts) finds them here, with the same expression in its query;
-- a database where every outline has its sizes costs it one probe of an empty index.
-- CreateIndex
CREATE INDEX "document_states_outline_lacks_sizes_idx" ON "document_states"("document_id") WHERE (outline IS NULL OR jsonb_path_exists(outline, 'lax $.** ? (@.sectionId.type() == "string" && !(@.size >= 0))'));
