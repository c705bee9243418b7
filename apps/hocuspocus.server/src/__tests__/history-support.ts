/** What the history tests share: a user with an API token whose label names the app in history. */
import { connectClient, mcpUrlOf } from '@collab/test-support/mcp'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type { RunningServer } from '../server.ts'

/** A new user and a read+write API token labelled `label` (the app history names for its changes). */
export async function userWithLabelledToken(server: RunningServer, handle: string, label: string) {
  const user = await server.services.users.add(handle)
  if (user.kind === 'error') throw new Error(user.message)
  const issued = await server.services.tokens.issue(user.value.id, { scopes: ['read', 'write'], label })
  if (issued.kind === 'error') throw new Error(issued.message)
  return { user: user.value, token: issued.value.token }
}

/**
 * The history tests' document: olive owns "Plan" (two sections); `ownerClient` is her MCP client with her
 * token "olive laptop", `agentClient` her agent's with a second token of hers, labelled "ci-bot".
 */
export async function planWithAgent(server: RunningServer): Promise<{
  owner: { user: { id: string }; token: string }
  ownerClient: Client
  agentClient: Client
  slug: string
  room: string
}> {
  const owner = await userWithLabelledToken(server, 'olive', 'olive laptop')
  const agentToken = await server.services.tokens.issue(owner.user.id, {
    scopes: ['read', 'write'],
    label: 'ci-bot',
  })
  if (agentToken.kind === 'error') throw new Error(agentToken.message)
  const ownerClient = await connectClient(mcpUrlOf(server), owner.token)
  const agentClient = await connectClient(mcpUrlOf(server), agentToken.value.token)
  const created = await server.services.documents.create(owner.user.id, {
    title: 'Plan',
    markdown: '## Intro\n\nHello there.\n\n## Body\n\nFirst paragraph.\n\nSecond paragraph.\n',
  })
  if (created.kind === 'error') throw new Error(created.message)
  return { owner, ownerClient, agentClient, slug: created.value.slug, room: created.value.room }
}
