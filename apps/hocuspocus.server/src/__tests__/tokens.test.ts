/** Token verification against a real database: every unusable token is refused alike. */
import { describe, expect, test } from 'bun:test'
import { countingRawQueries, DATABASE_KIND, settled } from '@collab/test-support/database'
import { userWithToken } from '@collab/test-support/server'
import { useSharedServer } from '@collab/test-support/shared-server'
import { createTokensService, PRINCIPAL_CACHE_TTL_MS, PRINCIPAL_REFRESH_AFTER_MS } from '../auth/tokens.ts'
import type { RunningServer } from '../server.ts'

describe(`API tokens (${DATABASE_KIND})`, () => {
  let server: RunningServer
  let handle: (base: string) => string
  useSharedServer((share) => {
    ;({ server, handle } = share)
  })

  test('a valid token resolves to its user and scopes, and only its hash is stored', async () => {
    const { user, token, tokenId } = await userWithToken(server, handle('tokyo'), ['read'])
    const principal = await server.services.tokens.verify(token)
    expect(principal).toMatchObject({ user: { id: user.id }, tokenId, scopes: ['read'] })
    const row = await server.services.db.prisma.apiToken.findUniqueOrThrow({ where: { id: tokenId } })
    const secret = token.split('_').slice(2).join('_')
    expect(Buffer.from(row.secretHash).toString('hex')).not.toContain(Buffer.from(secret).toString('hex'))
    expect(JSON.stringify(row)).not.toContain(secret)
  })

  test('a wrong secret for a real id, an unknown id and a malformed token are all refused', async () => {
    const { token, tokenId } = await userWithToken(server, handle('lima'))
    const wrongSecret = `ctk_${tokenId}_${'A'.repeat(43)}`
    const unknownId = token.replace(tokenId, '000000000000')
    expect(await server.services.tokens.verify(token)).not.toBeNull() // now cached: the wrong secret must not ride on it
    for (const bad of [wrongSecret, unknownId, 'ctk_short', '', `${token}x`]) {
      expect(await server.services.tokens.verify(bad)).toBeNull()
    }
  })

  test('a revoked token and an expired token are refused', async () => {
    const { token, tokenId } = await userWithToken(server, handle('oslo'))
    expect(await server.services.tokens.verify(token)).not.toBeNull() // cached before the revoke
    await server.services.tokens.revoke(tokenId)
    expect(await server.services.tokens.verify(token)).toBeNull()

    const { user } = await userWithToken(server, handle('rome'))
    const issued = await server.services.tokens.issue(user.id, { scopes: ['read'], expiresDays: 1 })
    if (issued.kind === 'error') throw new Error(issued.message)
    const later = createTokensService(server.services.db.prisma, () => new Date(Date.now() + 2 * 86_400_000))
    expect(await later.verify(issued.value.token)).toBeNull()
    expect(await server.services.tokens.verify(issued.value.token)).not.toBeNull()
  })

  test('another instance trusts a verified token for at most PRINCIPAL_CACHE_TTL_MS after a revoke', async () => {
    const { token, tokenId } = await userWithToken(server, handle('bergen'))
    let clock = Date.now()
    const other = createTokensService(server.services.db.prisma, () => new Date(clock))
    expect(await other.verify(token)).not.toBeNull()
    await server.services.tokens.revoke(tokenId) // through this instance: the other one is not told
    clock += PRINCIPAL_CACHE_TTL_MS - 1
    expect(await other.verify(token)).not.toBeNull()
    clock += 1
    expect(await other.verify(token)).toBeNull()
  })

  test('concurrent verifications share one query; a token in use is renewed before it lapses', async () => {
    const { token } = await userWithToken(server, handle('lisbon'))
    const { client, sent } = countingRawQueries(server.services.db.prisma)
    let clock = Date.now()
    const tokens = createTokensService(client, () => new Date(clock))
    const burst = () => Promise.all(Array.from({ length: 50 }, () => tokens.verify(token)))
    expect((await burst()).every((p) => p !== null)).toBe(true)
    expect(sent.count).toBe(1) // before: one query each, queued on PGlite's one session

    clock += PRINCIPAL_REFRESH_AFTER_MS + 1
    expect((await burst()).every((p) => p !== null)).toBe(true) // from the cache, renewed meanwhile
    await settled(() => sent.answered === 2)
    expect(sent.count).toBe(2)
    clock += PRINCIPAL_CACHE_TTL_MS - PRINCIPAL_REFRESH_AFTER_MS // past the first answer's lapse
    expect((await burst()).every((p) => p !== null)).toBe(true)
    expect(sent.count).toBe(2)
  })

  test('a renewal that finds the token revoked refuses it before the TTL; a query under way at a revoke is not kept', async () => {
    const { token, tokenId } = await userWithToken(server, handle('porto'))
    const { client, sent } = countingRawQueries(server.services.db.prisma)
    let clock = Date.now()
    const other = createTokensService(client, () => new Date(clock))
    expect(await other.verify(token)).not.toBeNull()
    await server.services.tokens.revoke(tokenId) // through another instance: this one is not told
    clock += PRINCIPAL_REFRESH_AFTER_MS + 1
    expect(await other.verify(token)).not.toBeNull() // within the TTL, from the cache; renewed meanwhile
    await settled(() => sent.answered === 2)
    expect(await other.verify(token)).toBeNull() // the renewal saw the revoke

    const fresh = await userWithToken(server, handle('faro'))
    const tokens = createTokensService(client, () => new Date(clock))
    const inFlight = tokens.verify(fresh.token)
    tokens.forget(fresh.tokenId) // a revoke heard from elsewhere while the query runs
    expect(await inFlight).not.toBeNull()
    const before = sent.count
    expect(await tokens.verify(fresh.token)).not.toBeNull()
    expect(sent.count).toBe(before + 1) // asked again: what the query under way read was not kept
  })

  test('write without read is widened to read,write; unknown scopes are refused', async () => {
    const { parseScopes } = await import('../auth/tokens.ts')
    expect(parseScopes('write')).toEqual({ kind: 'ok', value: ['read', 'write'] })
    expect(parseScopes('read')).toEqual({ kind: 'ok', value: ['read'] })
    expect(parseScopes('admin').kind).toBe('error')
    // suggest (edits land as suggestions) replaces write, never joins it.
    expect(parseScopes('suggest')).toEqual({ kind: 'ok', value: ['read', 'suggest'] })
    const both = parseScopes('read,write,suggest')
    expect(both.kind === 'error' && both.message).toContain('pick one')
  })
})
