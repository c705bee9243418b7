/**
 * Human slugs from titles: lowercase ASCII words joined by '-', and always a short random tail. A tail only
 * on collision would tell a stranger that someone else's private document has that title (the exact slug
 * comes back for an unused title, a tailed one for a used title). Slugs made before keep working.
 */
import { randomBytes, randomInt } from 'node:crypto'
import { MAX_SLUG_BASE_CHARS } from '../limits.ts'

export const SLUG_PATTERN = /^[a-z0-9][a-z0-9-]{0,63}$/

export function slugBase(title: string): string {
  const base = title
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, MAX_SLUG_BASE_CHARS)
    .replace(/-+$/g, '')
  return base || 'untitled'
}

/** Length of the random tail (base 36): 36^6 ≈ 2.2 billion, so a collision retry is rare. */
export const SLUG_TAIL_CHARS = 6

export function slugWithTail(base: string): string {
  const tail = randomInt(36 ** SLUG_TAIL_CHARS)
    .toString(36)
    .padStart(SLUG_TAIL_CHARS, '0')
  return `${base}-${tail}`
}

/** Random Yjs document name: never derived from the title, so renaming never moves the live document. */
export function newRoomName(): string {
  return randomBytes(16).toString('base64url')
}
