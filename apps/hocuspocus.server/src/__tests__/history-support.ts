/** What the history tests share: a user with an API token whose label names the app in history. */
import type { RunningServer } from '../server.ts'

/** A new user and a read+write API token labelled `label` (the app history names for its changes). */
export async function userWithLabelledToken(server: RunningServer, handle: string, label: string) {
  const user = await server.services.users.add(handle)
  if (user.kind === 'error') throw new Error(user.message)
  const issued = await server.services.tokens.issue(user.value.id, { scopes: ['read', 'write'], label })
  if (issued.kind === 'error') throw new Error(issued.message)
  return { user: user.value, token: issued.value.token }
}
