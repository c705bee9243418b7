-- A log row larger than one write slice (256 KiB, an editor's paste of megabytes) is stored in parts, one
-- row each (documents/store.ts appendUpdate), as large snapshots and versions are since 20261206094927:
-- an INSERT of one 8 MiB update grew PGlite's WebAssembly heap for good. Existing rows stay as they are
-- (`parts` 0: the update is the column).
-- AlterTable
ALTER TABLE "document_updates" ADD COLUMN     "parts" INTEGER NOT NULL DEFAULT 0;

-- CreateTable
CREATE TABLE "document_update_parts" (
    "update_id" BIGINT NOT NULL,
    "n" INTEGER NOT NULL,
    "data" BYTEA NOT NULL,

    CONSTRAINT "document_update_parts_pkey" PRIMARY KEY ("update_id","n")
);

-- AddForeignKey
ALTER TABLE "document_update_parts" ADD CONSTRAINT "document_update_parts_update_id_fkey" FOREIGN KEY ("update_id") REFERENCES "document_updates"("id") ON DELETE CASCADE ON UPDATE CASCADE;
