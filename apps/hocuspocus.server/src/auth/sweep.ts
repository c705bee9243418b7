/**
 * Expired sign-in and OAuth rows are deleted, so the tables stay bounded: every refresh adds an access
 * and a refresh token row, every sign-in a session, every flow a code. A row goes a day after it stopped
 * mattering: expired sessions, codes, invites and tokens, and refresh tokens rotated or revoked a day ago
 * (a replay of one after that is refused as unknown, instead of also revoking its family). The auth
 * module runs this every AUTH_SWEEP_INTERVAL_MS on each instance (the deletes are idempotent).
 */
import type { PrismaClient } from '../db/generated/client.ts'

export const AUTH_SWEEP_INTERVAL_MS = 60 * 60 * 1000
/** How long a row is kept after it expired or was revoked (audit of recent failures, replay detection). */
export const AUTH_SWEEP_GRACE_MS = 24 * 60 * 60 * 1000

export async function sweepExpired(prisma: PrismaClient, now: Date = new Date()) {
  const before = new Date(now.getTime() - AUTH_SWEEP_GRACE_MS)
  const [accessTokens, refreshTokens, sessions, verifications, assertions] = await prisma.$transaction([
    prisma.oauthAccessToken.deleteMany({
      where: { OR: [{ expiresAt: { lt: before } }, { revoked: { lt: before } }] },
    }),
    // Deleting a refresh token deletes the access tokens issued with it (long expired by then).
    prisma.oauthRefreshToken.deleteMany({
      where: {
        OR: [{ expiresAt: { lt: before } }, { revoked: { lt: before } }, { rotatedAt: { lt: before } }],
      },
    }),
    prisma.session.deleteMany({ where: { expiresAt: { lt: before } } }),
    prisma.verification.deleteMany({ where: { expiresAt: { lt: before } } }),
    prisma.oauthClientAssertion.deleteMany({ where: { expiresAt: { lt: before } } }),
  ])
  return {
    accessTokens: accessTokens.count,
    refreshTokens: refreshTokens.count,
    sessions: sessions.count,
    verifications: verifications.count,
    assertions: assertions.count,
  }
}
