/**
 * On an empty database: a local user, a read+write token saved to a 0600 file in the data folder (never
 * logged or printed), and a welcome document, so a newcomer can connect an editor or an AI app at once.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Services } from './services.ts'

export const TOKEN_FILE_NAME = 'first-run-token'

const WELCOME = `This document lives on your collaboration server. Open it in an editor, or ask an AI app connected over MCP to outline, read or edit it.

## Next steps

- Share it with someone: \`bun run cli -- doc share SLUG HANDLE --role editor\`
- Import Markdown: \`bun run cli -- doc import notes.md --owner HANDLE\`
`

/** The handle of the first user; rename-free and the same on every machine, so docs can name it. */
export const FIRST_USER_HANDLE = 'local'

/** Returns the token file's path when this run created it, else null. */
export async function firstRun(
  services: Services,
  dataDir: string,
): Promise<{ tokenFile: string; handle: string; userId: string } | null> {
  if ((await services.users.count()) > 0) return null
  const user = await services.users.add(FIRST_USER_HANDLE, 'Local user')
  if (user.kind === 'error') return null // another instance won the race
  const issued = await services.tokens.issue(user.value.id, { scopes: ['read', 'write'], label: 'first run' })
  if (issued.kind === 'error') throw new Error(issued.message)
  mkdirSync(dataDir, { recursive: true, mode: 0o700 })
  const tokenFile = join(dataDir, TOKEN_FILE_NAME)
  writeFileSync(tokenFile, `${issued.value.token}\n`, { mode: 0o600 })
  await services.documents.create(user.value.id, { title: 'Welcome', markdown: WELCOME })
  return { tokenFile, handle: user.value.handle, userId: user.value.id }
}
