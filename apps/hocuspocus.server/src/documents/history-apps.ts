/**
 * Names the app behind a credential for attribution (history-authors.ts): an API token's label, or the
 * name of the OAuth client whose access token it is. Looked up once per credential and kept for
 * APP_NAME_TTL_MS, so a store of a person typing costs a map read, not a query.
 */

import type { PrismaClient } from '../db/generated/client.ts'
import { storableText } from '../db/storable-text.ts'
import { MAX_LABEL_CHARS } from '../limits.ts'
import { type Author, credentialKind, type RawAuthor } from './history-authors.ts'

/** How long a credential's app name is kept before it is read again (a renamed token shows after this). */
export const APP_NAME_TTL_MS = 60_000
/** Credentials whose names are kept at most; the oldest goes first. */
const MAX_CACHED_NAMES = 10_000

export type AppNames = {
  /** The authors of a batch with their apps named; a failed lookup names the app '' (never fails a store). */
  resolve(raws: Iterable<RawAuthor>): Promise<Author[]>
}

export function createAppNames(prisma: PrismaClient, now: () => number = Date.now): AppNames {
  const cache = new Map<string, { name: string; at: number }>()

  async function nameOf(credential: string): Promise<string> {
    const kind = credentialKind(credential)
    if (kind === 'editor') return ''
    const hit = cache.get(credential)
    if (hit && now() - hit.at < APP_NAME_TTL_MS) return hit.name
    let name = ''
    try {
      if (kind === 'oauth') {
        const rows = await prisma.$queryRaw<Array<{ name: string | null; clientId: string }>>`
          SELECT c.name, c.client_id AS "clientId"
            FROM oauth_access_tokens t JOIN oauth_clients c ON c.client_id = t.client_id
           WHERE t.id = ${credential.slice('oauth:'.length)}`
        name = rows[0] ? rows[0].name || rows[0].clientId : ''
      } else {
        const row = await prisma.apiToken.findUnique({ where: { id: credential }, select: { label: true } })
        name = row?.label ?? ''
      }
    } catch {
      return hit?.name ?? '' // attribution never fails a store; named again at the next lookup
    }
    name = storableText(name).slice(0, MAX_LABEL_CHARS)
    cache.delete(credential)
    cache.set(credential, { name, at: now() })
    if (cache.size > MAX_CACHED_NAMES) cache.delete(cache.keys().next().value as string)
    return name
  }

  return {
    async resolve(raws) {
      const authors: Author[] = []
      for (const raw of raws) {
        const via = credentialKind(raw.credential)
        const author: Author = { k: raw.kind, u: raw.userId, h: raw.handle, v: via }
        if (via !== 'editor') author.a = await nameOf(raw.credential)
        if (raw.action) author.x = raw.action
        authors.push(author)
      }
      return authors
    },
  }
}
