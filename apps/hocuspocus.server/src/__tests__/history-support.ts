/**
 * What the history tests share: a user with an API token whose label names the app in history, the plan
 * document with its owner's and her agent's clients, a file's server with that plan.
 */
import { beforeAll } from 'bun:test'
import { buildDocument, paragraph } from '@collab/test-support/documents'
import { callText, connectClient, mcpUrlOf } from '@collab/test-support/mcp'
import { connectProvider } from '@collab/test-support/provider'
import { useTestServer } from '@collab/test-support/server'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type { Config } from '../config.ts'
import { STATE_SLICE_BYTES } from '../documents/sliced-read.ts'
import type { RunningServer } from '../server.ts'

/** A new user and a read+write API token labelled `label` (the app history names for its changes). */
export async function userWithLabelledToken(server: RunningServer, handle: string, label: string) {
  const user = await server.services.users.add(handle)
  if (user.kind === 'error') throw new Error(user.message)
  const issued = await server.services.tokens.issue(user.value.id, { scopes: ['read', 'write'], label })
  if (issued.kind === 'error') throw new Error(issued.message)
  return { user: user.value, token: issued.value.token }
}

export interface Plan {
  owner: { user: { id: string }; token: string }
  ownerClient: Client
  agentClient: Client
  slug: string
  room: string
}

/**
 * The history tests' document: olive owns "Plan" (two sections); `ownerClient` is her MCP client with her
 * token "olive laptop", `agentClient` her agent's with a second token of hers, labelled "ci-bot".
 */
export async function planWithAgent(server: RunningServer): Promise<Plan> {
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

/** The agent's append_to_document of `markdown` to the plan: the tool's answer. */
export function agentAppends(plan: Plan, markdown: string) {
  return callText(plan.agentClient, 'append_to_document', { slug: plan.slug, markdown })
}

/** A person `handle` (a token labelled `label`) made an editor of the plan, and their provider on it. */
export async function editorOnPlan(plan: Plan & { server: RunningServer }, handle: string, label: string) {
  const person = await userWithLabelledToken(plan.server, handle, label)
  const shared = await plan.server.services.documents.share(plan.slug, person.user.id, 'editor')
  if (shared.kind === 'error') throw new Error(shared.message)
  return { person, provider: connectProvider(plan.server.url, plan.room, person.token) }
}

/** Versions as soon as asked: no interval between automatic ones, a short pause after people's typing. */
const VERSIONS_AT_ONCE: Partial<Config> = { versionMinIntervalMs: 0, versionPauseMs: 150 }

/**
 * A history test file's server (on `overrides`, versions as soon as asked unless they say otherwise) and
 * its plan (`planWithAgent`): the object returned is filled in before the file's tests.
 */
export function useHistoryPlan(
  overrides: Partial<Config> = VERSIONS_AT_ONCE,
): Plan & { server: RunningServer } {
  const plan = {} as Plan & { server: RunningServer }
  useTestServer((server) => {
    plan.server = server
  }, overrides)
  beforeAll(async () => {
    Object.assign(plan, await planWithAgent(plan.server))
  }, 60_000)
  return plan
}

/**
 * A document of about `slices` read slices (STATE_SLICE_BYTES) of state, owned by `userId`: paragraphs of
 * `sentence` repeated, so a restore or revert of it reads and writes its states slice by slice.
 */
export function sliceSizedDocument(
  server: RunningServer,
  userId: string,
  title: string,
  slices: number,
  sentence: string,
) {
  return buildDocument(server, userId, { title }, (fragment) => {
    fragment.push(
      Array.from({ length: Math.ceil((STATE_SLICE_BYTES * slices) / (sentence.length * 10)) }, (_, i) =>
        paragraph(`${i}: ${sentence.repeat(10)}`),
      ),
    )
  })
}
