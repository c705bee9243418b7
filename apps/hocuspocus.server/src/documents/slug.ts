/** Human slugs from titles: lowercase ASCII words joined by '-', with a short random tail on collision. */
import { randomBytes } from 'node:crypto'

export const MAX_SLUG_BASE_CHARS = 48
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

export function slugWithTail(base: string): string {
  const tail = randomBytes(4).readUInt32BE(0).toString(36).padStart(6, '0').slice(-6)
  return `${base}-${tail}`
}

/** Random Yjs document name: never derived from the title, so renaming never moves the live document. */
export function newRoomName(): string {
  return randomBytes(16).toString('base64url')
}
