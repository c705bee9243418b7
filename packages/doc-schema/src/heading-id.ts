import { HEADING_ID_LENGTH } from './limits.ts'

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'

/** What `newHeadingId` makes: exactly 16 characters of the URL-safe alphabet. */
const HEADING_ID_PATTERN = new RegExp(`^[A-Za-z0-9_-]{${HEADING_ID_LENGTH}}$`)

/** A fresh section id: 16 URL-safe characters from the platform CSPRNG (works in Bun and browsers). */
export function newHeadingId(): string {
  const bytes = new Uint8Array(HEADING_ID_LENGTH)
  crypto.getRandomValues(bytes)
  let id = ''
  // 64 symbols: the low 6 bits of a byte index the alphabet without bias.
  for (const byte of bytes) id += ALPHABET[byte & 63]
  return id
}

/**
 * Whether a value is a well-formed section id. Any co-editor can set a heading's id to any text, and ids are
 * printed outside the data frame of agents' reads, so only ids of this exact shape count as ids.
 */
export function isHeadingId(value: unknown): value is string {
  return typeof value === 'string' && HEADING_ID_PATTERN.test(value)
}
