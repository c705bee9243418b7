/** The services every transport shares: one place for each rule. */
import { AccessChanges } from './access-changes.ts'
import { createTokensService, type TokensService } from './auth/tokens.ts'
import { createUsersService, type UsersService } from './auth/users.ts'
import { type ChatService, createChatService } from './chat/service.ts'
import type { Database } from './db/client.ts'
import { createSearchService, type SearchService } from './documents/search.ts'
import { createDocumentsService, type DocumentsService } from './documents/service.ts'

export type Services = {
  db: Database
  users: UsersService
  tokens: TokensService
  documents: DocumentsService
  /** Finding documents for a user (find_documents) and its paging snapshots; access as documents/access.ts. */
  search: SearchService
  chat: ChatService
  /** Told of every change of who may open or write what (collab/access-watch.ts follows it). */
  accessChanges: AccessChanges
}

export function createServices(db: Database): Services {
  const accessChanges = new AccessChanges()
  const tokens = createTokensService(db.prisma, undefined, accessChanges)
  // A revoke heard from another process (Redis): this process's cached principal goes at once.
  accessChanges.on((change, source) => {
    if (change.kind === 'token' && source === 'remote') tokens.forget(change.tokenId)
  })
  return {
    db,
    users: createUsersService(db.prisma),
    tokens,
    documents: createDocumentsService(db.prisma, accessChanges),
    search: createSearchService(db.prisma),
    chat: createChatService(db.prisma),
    accessChanges,
  }
}
