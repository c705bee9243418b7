/**
 * What the history tests share: a user with an API token whose label names the app in history, the plan
 * document with its owner's and her agent's clients, a file's server (with that plan), documents of several
 * read slices with an agent's client, the version of an agent's write, spies restored after each test.
 */
import { afterEach, beforeAll, expect } from 'bun:test'
import { buildDocument, paragraph } from '@collab/test-support/documents'
import { callText, connectClient, mcpUrlOf } from '@collab/test-support/mcp'
import { connectProvider } from '@collab/test-support/provider'
import { eventually, userWithToken, useTestServer } from '@collab/test-support/server'
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
 * A history test file's server, on `overrides` (versions as soon as asked unless they say otherwise): the
 * object returned holds it from before the file's tests.
 */
export function useHistoryServer(overrides: Partial<Config> = VERSIONS_AT_ONCE): { server: RunningServer } {
  const held = {} as { server: RunningServer }
  useTestServer((server) => {
    held.server = server
  }, overrides)
  return held
}

/**
 * A history test file's server (`useHistoryServer`) and its plan (`planWithAgent`): the object returned is
 * filled in before the file's tests.
 */
export function useHistoryPlan(
  overrides: Partial<Config> = VERSIONS_AT_ONCE,
): Plan & { server: RunningServer } {
  const plan = useHistoryServer(overrides) as Plan & { server: RunningServer }
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

/** The sentence a large test document repeats unless its test says another. */
const MANUAL_SENTENCE = 'A long paragraph of an ordinary manual, repeated to make the document large. '

/**
 * A new user `handle`'s document of about `slices` read slices (`sliceSizedDocument`, titled `title`) and
 * an MCP client with her token, for a test to close.
 */
export async function sliceSizedWithAgent(
  server: RunningServer,
  handle: string,
  title: string,
  slices: number,
  sentence = MANUAL_SENTENCE,
) {
  const { user, token } = await userWithToken(server, handle)
  const created = await sliceSizedDocument(server, user.id, title, slices, sentence)
  const agent = await connectClient(mcpUrlOf(server), token)
  return { created, agent }
}

/** The number `pattern`'s first group finds in a tool's answer `text` (a version id); fails without one. */
export function versionId(text: string, pattern: RegExp): number {
  const id = pattern.exec(text)?.[1]
  expect(id, text).toBeDefined()
  return Number(id)
}

/** `agent` appends a line to the document `slug`; the id of the version taken after that write. */
export async function versionOfAgentWrite(agent: Client, slug: string): Promise<number> {
  const written = await callText(agent, 'append_to_document', { slug, markdown: 'The agent was here.' })
  expect(written.isError, written.text).toBeFalsy()
  return eventually(async () => {
    const listed = await callText(agent, 'list_versions', { slug })
    return versionId(listed.text, /version (\d+) [^\n]*after an agent's write/)
  }, 40_000)
}

/** Spies of a test file, each restored after the test that made it: `track(spyOn(…))` returns the spy. */
export function useRestoredSpies() {
  const spies: Array<{ mockRestore(): void }> = []
  afterEach(() => {
    for (const spy of spies.splice(0)) spy.mockRestore()
  })
  return <Spy extends { mockRestore(): void }>(spy: Spy): Spy => {
    spies.push(spy)
    return spy
  }
}
