-- CreateTable
CREATE TABLE "document_looks" (
    "user_id" UUID NOT NULL,
    "document_id" UUID NOT NULL,
    "version_id" BIGINT NOT NULL,
    "version_at" TIMESTAMPTZ(3) NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "document_looks_pkey" PRIMARY KEY ("user_id","document_id")
);

-- AddForeignKey
ALTER TABLE "document_looks" ADD CONSTRAINT "document_looks_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "document_looks" ADD CONSTRAINT "document_looks_document_id_fkey" FOREIGN KEY ("document_id") REFERENCES "documents"("id") ON DELETE CASCADE ON UPDATE CASCADE;
