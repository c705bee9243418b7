/**
 * Passwords: argon2id through Bun.password (memory-hard), in the PHC string format
 * (`$argon2id$v=19$m=…,t=…,p=…$salt$hash`), so the parameters travel with each hash and can be raised
 * later without breaking stored ones. Better Auth calls these for sign-in (see better-auth.ts).
 */
import { MAX_PASSWORD_CHARS, MIN_PASSWORD_CHARS } from '../limits.ts'

/** argon2id memory in KiB (OWASP's 19 MiB floor) and passes; one hash takes ~30 ms here. */
const ARGON2_MEMORY_KIB = 19_456
const ARGON2_PASSES = 2

export function hashPassword(password: string): Promise<string> {
  return Bun.password.hash(password, {
    algorithm: 'argon2id',
    memoryCost: ARGON2_MEMORY_KIB,
    timeCost: ARGON2_PASSES,
  })
}

/** False for a wrong password and for anything that is not a hash Bun can read. */
export async function verifyPassword(password: string, hash: string): Promise<boolean> {
  if (password.length > MAX_PASSWORD_CHARS) return false
  try {
    return await Bun.password.verify(password, hash)
  } catch {
    return false
  }
}

/** Why a new password is refused, or null when it is acceptable. */
export function passwordProblem(password: string): string | null {
  if (password.length < MIN_PASSWORD_CHARS) return `password: at least ${MIN_PASSWORD_CHARS} characters`
  if (password.length > MAX_PASSWORD_CHARS) return `password: at most ${MAX_PASSWORD_CHARS} characters`
  return null
}
