import { HEADING_ID_LENGTH } from './limits.ts'

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'

/** A fresh section id: 16 URL-safe characters from the platform CSPRNG (works in Bun and browsers). */
export function newHeadingId(): string {
  const bytes = new Uint8Array(HEADING_ID_LENGTH)
  crypto.getRandomValues(bytes)
  let id = ''
  // 64 symbols: the low 6 bits of a byte index the alphabet without bias.
  for (const byte of bytes) id += ALPHABET[byte & 63]
  return id
}
