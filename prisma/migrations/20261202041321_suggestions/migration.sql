-- AlterEnum
ALTER TYPE "token_scope" ADD VALUE 'suggest';

-- AlterTable
ALTER TABLE "documents" ADD COLUMN     "agents_suggest" BOOLEAN NOT NULL DEFAULT false;
