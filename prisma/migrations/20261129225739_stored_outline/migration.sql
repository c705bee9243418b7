-- AlterTable
ALTER TABLE "document_states" ADD COLUMN     "outline" JSONB;
