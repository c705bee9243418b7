-- AlterTable
ALTER TABLE "chat_messages" ADD COLUMN     "author_app" TEXT;
