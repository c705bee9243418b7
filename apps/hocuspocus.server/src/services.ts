/** The services every transport shares: one place for each rule. */
import { createTokensService, type TokensService } from './auth/tokens.ts'
import { createUsersService, type UsersService } from './auth/users.ts'
import type { Database } from './db/client.ts'
import { createDocumentsService, type DocumentsService } from './documents/service.ts'

export type Services = {
  db: Database
  users: UsersService
  tokens: TokensService
  documents: DocumentsService
}

export function createServices(db: Database): Services {
  return {
    db,
    users: createUsersService(db.prisma),
    tokens: createTokensService(db.prisma),
    documents: createDocumentsService(db.prisma),
  }
}
