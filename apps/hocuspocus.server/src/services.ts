/** The services every transport shares: one place for each rule. */
import { createTokensService, type TokensService } from './auth/tokens.ts'
import { createUsersService, type UsersService } from './auth/users.ts'
import { type ChatService, createChatService } from './chat/service.ts'
import type { Database } from './db/client.ts'
import { createDocumentsService, type DocumentsService } from './documents/service.ts'

export type Services = {
  db: Database
  users: UsersService
  tokens: TokensService
  documents: DocumentsService
  chat: ChatService
}

export function createServices(db: Database): Services {
  return {
    db,
    users: createUsersService(db.prisma),
    tokens: createTokensService(db.prisma),
    documents: createDocumentsService(db.prisma),
    chat: createChatService(db.prisma),
  }
}
