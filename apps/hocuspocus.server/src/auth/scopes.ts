/**
 * The scopes a token or a grant can hold, and the rule that reads a `--scope` value: pure, with no import
 * of the document schema, so the CLI checks a scope before it opens a database (auth/tokens.ts wraps it).
 */
import type { TokenScope } from '../db/generated/enums.ts'

export type Scope = TokenScope
export const ALL_SCOPES: readonly Scope[] = ['read', 'write', 'suggest']

/**
 * `raw` (`read`, `write`, `read,write`, `suggest`, `read,suggest`, any case and order) as the scopes it
 * names, read always among them, or what is wrong with it.
 */
export function scopesOf(raw: string): { scopes: Scope[] } | { wrong: string } {
  const parts = raw
    .split(',')
    .map((p) => p.trim().toLowerCase())
    .filter(Boolean)
  const bad = parts.find((p) => !(ALL_SCOPES as readonly string[]).includes(p))
  if (bad !== undefined || parts.length === 0) {
    return { wrong: `--scope: "${raw}" is not one of read, write, read,write, suggest, read,suggest` }
  }
  if (parts.includes('write') && parts.includes('suggest'))
    return {
      wrong: `--scope: "${raw}" holds both write and suggest; pick one: write changes documents, suggest proposes changes a person accepts`,
    }
  // `write` without `read` would be a token that can change what it cannot see: always include read.
  return { scopes: ALL_SCOPES.filter((s) => s === 'read' || parts.includes(s)) }
}
