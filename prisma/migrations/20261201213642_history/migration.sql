-- AlterTable
ALTER TABLE "document_states" ADD COLUMN     "unversioned_authors" JSONB NOT NULL DEFAULT '[]';

-- AlterTable
ALTER TABLE "document_updates" ADD COLUMN     "authors" JSONB NOT NULL DEFAULT '[]';

-- AlterTable
ALTER TABLE "document_versions" ADD COLUMN     "authors" JSONB NOT NULL DEFAULT '[]',
ADD COLUMN     "name" TEXT,
ADD COLUMN     "outline" JSONB,
ADD COLUMN     "reason" TEXT NOT NULL DEFAULT 'interval',
ADD COLUMN     "summary" JSONB;
