/**
 * What the page takes from another client's awareness state before drawing it (issue 24). The server
 * fills `user` from the connection's principal (collab/awareness-guard.ts); the page checks again, since a
 * state also comes from older servers and other instances: a name is text cut to MAX_NAME_CHARS, a colour
 * is `#rrggbb` or the name's own colour (never a CSS value that could fetch a URL or restyle the page), and
 * the agent badge is only `agent: true` as the server wrote it. No other field of `user` is shown.
 */
import { colorOf, isHexColor } from '@collab/doc-schema/editor'

/** Longest name drawn for anyone present (the server cuts to the same length). */
export const MAX_NAME_CHARS = 64

export type PresentUser = { name: string; color: string; agent: boolean }

/** The user a remote awareness state shows, or null when it names nobody. */
export function presentUser(state: unknown): PresentUser | null {
  const user = (state as { user?: unknown } | null)?.user
  if (typeof user !== 'object' || user === null) return null
  const { name, color, agent } = user as Record<string, unknown>
  if (typeof name !== 'string' || name.trim() === '') return null
  const shown = Array.from(name.replace(/\s+/g, ' ').trim()).slice(0, MAX_NAME_CHARS).join('')
  return { name: shown, color: safeColor(color, shown), agent: agent === true }
}

/** `color` when it is `#rrggbb`, else a colour derived from `seed`: what may go into a style attribute. */
export function safeColor(color: unknown, seed: string): string {
  return isHexColor(color) ? color : colorOf(seed)
}
