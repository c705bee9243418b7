-- A state larger than one write slice (256 KiB) is stored in parts, one row each (documents/store.ts):
-- the database never builds it as one value. Joining a 22 MB state's slices into one bytea for its INSERT
-- grew PGlite's WebAssembly heap by ~138 MB, which it keeps for good (the same for one 22 MB parameter);
-- row by row it does not grow. Existing states stay as they are (`parts` 0: the state is the column);
-- the next write of a large one stores it in parts.
-- AlterTable
ALTER TABLE "document_states" ADD COLUMN     "parts" INTEGER NOT NULL DEFAULT 0;

-- AlterTable
ALTER TABLE "document_versions" ADD COLUMN     "parts" INTEGER NOT NULL DEFAULT 0;

-- CreateTable
CREATE TABLE "document_state_parts" (
    "document_id" UUID NOT NULL,
    "n" INTEGER NOT NULL,
    "data" BYTEA NOT NULL,

    CONSTRAINT "document_state_parts_pkey" PRIMARY KEY ("document_id","n")
);

-- CreateTable
CREATE TABLE "document_version_parts" (
    "version_id" BIGINT NOT NULL,
    "n" INTEGER NOT NULL,
    "data" BYTEA NOT NULL,

    CONSTRAINT "document_version_parts_pkey" PRIMARY KEY ("version_id","n")
);

-- AddForeignKey
ALTER TABLE "document_state_parts" ADD CONSTRAINT "document_state_parts_document_id_fkey" FOREIGN KEY ("document_id") REFERENCES "document_states"("document_id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "document_version_parts" ADD CONSTRAINT "document_version_parts_version_id_fkey" FOREIGN KEY ("version_id") REFERENCES "document_versions"("id") ON DELETE CASCADE ON UPDATE CASCADE;
