-- CreateTable
CREATE TABLE "document_updates" (
    "id" BIGSERIAL NOT NULL,
    "document_id" UUID NOT NULL,
    "update" BYTEA NOT NULL,
    "byte_size" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "document_updates_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "document_updates_document_id_id_idx" ON "document_updates"("document_id", "id");

-- AddForeignKey
ALTER TABLE "document_updates" ADD CONSTRAINT "document_updates_document_id_fkey" FOREIGN KEY ("document_id") REFERENCES "documents"("id") ON DELETE CASCADE ON UPDATE CASCADE;
