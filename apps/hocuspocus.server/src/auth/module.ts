/**
 * Sign-in and the OAuth authorization server as one module: `createAuthModule(deps)` gives the router
 * to mount (pages and OAuth endpoints), the accounts service (passwords, invites, connected apps) and
 * `verifyAccessToken` for /mcp. Better Auth is built on first use, once the public origin is known
 * (with PORT=0 it is known only after listening).
 */
import type { AccessChanges } from '../access-changes.ts'
import type { PrismaClient } from '../db/generated/client.ts'
import type { Logger } from '../logger.ts'
import { isLoopback } from '../loopback.ts'
import { type AccountsService, createAccountsService } from './accounts.ts'
import {
  type BetterAuth,
  type ClientMetadataFetch,
  createBetterAuth,
  issuerOf,
  mcpResourceOf,
} from './better-auth.ts'
import { createMetadataFetch } from './metadata-fetch.ts'
import { createOAuthAccess } from './oauth-access.ts'
import { DEFAULT_TRUSTED_PROXIES } from './routes/client-address.ts'
import { authRoutes } from './routes.ts'
import { createSessionPrincipals, type SessionPrincipals } from './session-principal.ts'
import { sharedSecret } from './shared-state.ts'
import { AUTH_SWEEP_INTERVAL_MS, sweepExpired } from './sweep.ts'
import type { Principal } from './tokens.ts'

const SECRET_NAME = 'better-auth'

export type AuthModule = {
  router: ReturnType<typeof authRoutes>
  accounts: AccountsService
  /** False when the public origin cannot host OAuth (plain http off loopback): set PUBLIC_URL to https. */
  enabled(): boolean
  /** The authorization server's issuer (listed in /mcp's protected-resource metadata), when enabled. */
  issuer(): string | undefined
  /** The principal of an OAuth access token bound to this server's /mcp, or null. */
  verifyAccessToken(token: string): Promise<Principal | null>
  /** The public origin (PUBLIC_URL's, or the listening address's): what a browser's Origin must be. */
  origin(): string
  /** The person signed in by the browser's session cookie (the web editor), or null. */
  sessionPrincipal: SessionPrincipals
  /** Deletes expired sessions, codes and tokens now (also run every AUTH_SWEEP_INTERVAL_MS). */
  sweep(): ReturnType<typeof sweepExpired>
  /** Stops the periodic sweep. */
  close(): void
}

/** OAuth needs an https origin, or plain http on a loopback name (development). */
export function canHostOAuth(baseUrl: string): boolean {
  const url = new URL(baseUrl)
  if (url.protocol === 'https:') return true
  return url.protocol === 'http:' && isLoopback(url.hostname)
}

export function createAuthModule(deps: {
  prisma: PrismaClient
  logger: Logger
  /** PUBLIC_URL, or the address the server listens on; read on first use. */
  baseUrl: () => string
  /** AUTH_SECRET; absent: one generated secret shared through the database. */
  secret?: string
  /** TRUSTED_PROXIES; absent: loopback peers (a TLS proxy on this machine). */
  trustedProxies?: readonly string[]
  /**
   * Fetches Client ID Metadata Documents; absent: the SSRF-checked network fetch (metadata-fetch.ts).
   * Tests pass one serving documents from memory: no public https host is reachable from them.
   */
  clientMetadataFetch?: ClientMetadataFetch
  /** Told of sign-outs, so the web editor's sockets of that session close at once (access-watch). */
  accessChanges?: Pick<AccessChanges, 'emit'>
}): AuthModule {
  const { prisma } = deps
  const logger = deps.logger.child({ module: 'auth' })
  const baseUrl = () => deps.baseUrl().replace(/\/+$/, '')
  let instance: Promise<BetterAuth> | undefined
  const auth = () => {
    instance ??= (async () => {
      if (!canHostOAuth(baseUrl())) {
        throw new Error(`sign-in needs an https PUBLIC_URL (or a loopback address); ${baseUrl()} is neither`)
      }
      const secret = deps.secret ?? (await sharedSecret(prisma, SECRET_NAME))
      return createBetterAuth({
        prisma,
        baseUrl: baseUrl(),
        secret,
        clientMetadataFetch: deps.clientMetadataFetch ?? createMetadataFetch(),
      })
    })()
    instance.catch(() => {
      instance = undefined
    })
    return instance
  }
  const access = createOAuthAccess(prisma)
  const accounts = createAccountsService(prisma)
  const enabled = () => canHostOAuth(baseUrl())
  const sessionPrincipal = createSessionPrincipals({ prisma, auth, enabled })
  const sweep = () => sweepExpired(prisma)
  const sweeper = setInterval(() => {
    sweep().catch((error: Error) => logger.warn({ err: error.message }, 'auth sweep failed; retried later'))
  }, AUTH_SWEEP_INTERVAL_MS)
  sweeper.unref()
  return {
    router: authRoutes({
      prisma,
      auth,
      accounts,
      baseUrl,
      enabled,
      logger,
      trustedProxies: deps.trustedProxies ?? DEFAULT_TRUSTED_PROXIES,
      sessionPrincipal,
      signedOut: (tokenId) => deps.accessChanges?.emit({ kind: 'token', tokenId }),
    }),
    accounts,
    enabled,
    issuer: () => (enabled() ? issuerOf(baseUrl()) : undefined),
    verifyAccessToken: (token) =>
      enabled() ? access.verify(token, mcpResourceOf(baseUrl())) : Promise.resolve(null),
    origin: () => new URL(baseUrl()).origin,
    sessionPrincipal,
    sweep,
    close: () => clearInterval(sweeper),
  }
}
