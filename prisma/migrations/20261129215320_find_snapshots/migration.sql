-- CreateTable
CREATE TABLE "find_snapshots" (
    "id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "document_ids" UUID[],
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "find_snapshots_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "find_snapshots_created_at_idx" ON "find_snapshots"("created_at");
