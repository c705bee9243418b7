/**
 * The Better Auth instance: accounts and sessions on our `users` table (sign-in by handle through its
 * username plugin, passwords hashed by passwords.ts), and the OAuth 2.1 authorization server for /mcp
 * (its MCP plugin, which is its OAuth provider bound to one resource). See docs/auth.md for why this
 * library and how each OAuth rule is met. Nothing here reads the environment.
 */
import { createHash } from 'node:crypto'
import type { BetterAuthPlugin } from 'better-auth'
import type { PrismaClient } from '../db/generated/client.ts'
import { MAX_PASSWORD_CHARS, MIN_PASSWORD_CHARS } from '../limits.ts'
import { hashPassword, verifyPassword } from './passwords.ts'
import { databaseRateLimitStorage } from './shared-state.ts'
import { HANDLE_PATTERN } from './users.ts'

/** Better Auth's routes live under this path; the issuer is `${base}${AUTH_BASE_PATH}`. */
export const AUTH_BASE_PATH = '/auth'
/** Access tokens live 10 minutes: a leaked one is short-lived, and each use is checked (oauth-access.ts). */
export const ACCESS_TOKEN_TTL_SECONDS = 10 * 60
/** Refresh tokens rotate on every use (a reused one revokes its family) and expire after 30 days unused. */
export const REFRESH_TOKEN_TTL_SECONDS = 30 * 24 * 60 * 60
/** Authorization codes: single use, 2 minutes (clients exchange them at once). */
export const AUTHORIZATION_CODE_TTL_SECONDS = 120
/** A browser session lasts 7 days, renewed once a day while used. */
export const SESSION_TTL_SECONDS = 7 * 24 * 60 * 60
const SESSION_RENEW_SECONDS = 24 * 60 * 60
/**
 * What /mcp grants: `read` always, `write` or `suggest` (edits land as suggestions, docs/history.md) when
 * the app asked for it and the person approved. `offline_access` yields a refresh token.
 */
export const MCP_SCOPES = ['read', 'write', 'suggest'] as const
export const OAUTH_SCOPES = ['openid', 'offline_access', ...MCP_SCOPES]
/** Unauthenticated client registrations per peer address per minute (and routes/registration-limits.ts). */
export const REGISTRATIONS_PER_MINUTE = 5
/** Sign-in attempts per peer address per minute. */
export const SIGN_INS_PER_MINUTE = 10
/**
 * The header carrying the peer's address to Better Auth (its rate limits key on it). routes/ sets it
 * from the socket on every request it forwards, replacing any value a client sent.
 */
export const PEER_IP_HEADER = 'x-collab-peer-ip'

/** How OAuth tokens and codes are stored: SHA-256, so a database read does not yield usable tokens. */
export const storedTokenHash = (token: string) => createHash('sha256').update(token).digest('base64url')

export type BetterAuthSettings = {
  prisma: PrismaClient
  /** The server's public origin, e.g. https://docs.example.org (PUBLIC_URL) or http://127.0.0.1:4000. */
  baseUrl: string
  secret: string
  /** Fetches Client ID Metadata Documents (metadata-fetch.ts); absent: clients can only register (DCR). */
  clientMetadataFetch?: ClientMetadataFetch
}

export type ClientMetadataFetch = (input: RequestInfo | URL, init?: RequestInit) => Promise<Response>

export function mcpResourceOf(baseUrl: string): string {
  return `${baseUrl}/mcp`
}

export function issuerOf(baseUrl: string): string {
  return `${baseUrl}${AUTH_BASE_PATH}`
}

/**
 * Better Auth and its plugins are imported here, on first use, not with this file: they are a third of the
 * code a server start would load (~0.9 s of CPU measured), and most starts sign nobody in before the
 * first page or OAuth request.
 */
export async function createBetterAuth(settings: BetterAuthSettings) {
  const [{ cimd }, { mcp }, { betterAuth }, { prismaAdapter }, { username }] = await Promise.all([
    import('@better-auth/cimd'),
    import('@better-auth/mcp'),
    import('better-auth'),
    import('better-auth/adapters/prisma'),
    import('better-auth/plugins/username'),
  ])
  const { prisma, baseUrl } = settings
  const resource = mcpResourceOf(baseUrl)
  return betterAuth({
    appName: 'Collaborative documents',
    baseURL: baseUrl,
    basePath: AUTH_BASE_PATH,
    secret: settings.secret,
    database: prismaAdapter(prisma, { provider: 'postgresql' }),
    telemetry: { enabled: false },
    logger: { disabled: true },
    trustedOrigins: [new URL(baseUrl).origin],
    emailAndPassword: {
      enabled: true,
      disableSignUp: true,
      minPasswordLength: MIN_PASSWORD_CHARS,
      maxPasswordLength: MAX_PASSWORD_CHARS,
      password: { hash: hashPassword, verify: ({ hash, password }) => verifyPassword(password, hash) },
    },
    session: { expiresIn: SESSION_TTL_SECONDS, updateAge: SESSION_RENEW_SECONDS },
    account: { accountLinking: { enabled: false } },
    advanced: {
      cookiePrefix: 'collab',
      // Secure cookies exactly when the public URL is https (behind TLS); HttpOnly and SameSite=Lax
      // always (Lax: the OAuth flow arrives by a top-level navigation from the client's site).
      useSecureCookies: baseUrl.startsWith('https://'),
      defaultCookieAttributes: { httpOnly: true, sameSite: 'lax', path: '/' },
      ipAddress: { ipAddressHeaders: [PEER_IP_HEADER] },
    },
    rateLimit: {
      enabled: true,
      window: 60,
      max: 120,
      customRules: { '/sign-in/username': { window: 60, max: SIGN_INS_PER_MINUTE } },
      customStorage: databaseRateLimitStorage(prisma),
    },
    plugins: [
      username({
        displayUsername: false,
        minUsernameLength: 2,
        maxUsernameLength: 32,
        usernameValidator: (name) => HANDLE_PATTERN.test(name),
        schema: { user: { fields: { username: 'handle' } } },
      }),
      // Typed against another copy of Better Auth's core (the plugin pins older peers): same shape at runtime.
      mcp({
        resource,
        loginPage: '/sign-in',
        consentPage: '/consent',
        // Opaque access tokens stored (hashed) in the database, so every /mcp call can check its grant.
        disableJwtPlugin: true,
        scopes: OAUTH_SCOPES,
        grantTypes: ['authorization_code', 'refresh_token'],
        resources: [{ identifier: resource, name: 'MCP', allowedScopes: [...OAUTH_SCOPES] }],
        accessTokenExpiresIn: ACCESS_TOKEN_TTL_SECONDS,
        refreshTokenExpiresIn: REFRESH_TOKEN_TTL_SECONDS,
        codeExpiresIn: AUTHORIZATION_CODE_TTL_SECONDS,
        // Strict rotation: a refresh token used twice is a replay (its family is revoked).
        refreshTokenReuseInterval: 0,
        storeTokens: { hash: (token) => storedTokenHash(token) },
        allowDynamicClientRegistration: true,
        allowUnauthenticatedClientRegistration: true,
        clientRegistrationDefaultScopes: [...OAUTH_SCOPES],
        rateLimit: {
          register: { window: 60, max: REGISTRATIONS_PER_MINUTE },
          token: { window: 60, max: 30 },
          authorize: { window: 60, max: 30 },
        },
      }) as unknown as BetterAuthPlugin,
      // Client ID Metadata Documents (the MCP-preferred registration): a client_id that is an https URL
      // names a document the server fetches (bounded by the plugin's fetch policy and our transport).
      ...(settings.clientMetadataFetch
        ? [
            cimd({
              fetchClientMetadataResource: settings.clientMetadataFetch,
              metadataProfile: 'mcp-2026-07-28',
            }) as unknown as BetterAuthPlugin,
          ]
        : []),
    ],
  })
}

export type BetterAuth = Awaited<ReturnType<typeof createBetterAuth>>
