/**
 * On an empty database: a local user, a read+write token saved to a 0600 file in the data folder (never
 * logged or printed), and a welcome document, so a newcomer can connect an editor or an AI app at once.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Services } from './services.ts'

export const TOKEN_FILE_NAME = 'first-run-token'

/**
 * The welcome document: what a person can do from the page itself (docs/web.md), and how an AI app joins.
 * Nothing in it asks for a command line: the page shares, imports and exports.
 */
const WELCOME = `This document lives on your collaboration server. Type anywhere to edit it: everyone who has it open sees your changes as you make them, and you see theirs, with each person's caret and name in their own colour.

## Next steps

- **Format** with the bar above the text, or type Markdown at a line's start: \`## \` for a heading, \`- \` for a list, \`[ ] \` for a task.
- **Share** it: the Share button at the top gives people editor or viewer access by their handle, or makes it public.
- **Talk** about a section: the chat beside the text belongs to the heading above your cursor.
- **Import** a Markdown file, or start a new document, from Documents at the top left; **Export Markdown** downloads this one.
- **Connect an AI app** over MCP (the server's /mcp address): it can outline, read, edit and chat here, and you see it work, marked as your agent. Your account page (your name at the top right) lists the apps you connected.
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
