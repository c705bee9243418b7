/**
 * An agent's burst of writes with a person in the document, while compactions fall due (a log of four
 * rows is due): a compaction during the burst takes the burst's version so far, of the log up to its
 * bound, and the rest of the burst is a version of its own once the agent pauses. Before, the due
 * compaction merged the rows after the bound too, and the version waiting for them found nothing left
 * to take: the burst's last writes were in no agent's version. Real server and provider, a real MCP
 * SDK client (history-support.ts).
 */
import { beforeAll, describe, expect, test } from 'bun:test'
import { eventually } from '@collab/test-support/server'
import { agentAppends, editorOnPlan, type Plan, planWithAgent, useHistoryServer } from './history-support.ts'

const held = useHistoryServer({
  versionPauseMs: 30_000,
  versionAgentPauseMs: 1_000,
  storeCompactAfterUpdates: 4,
})
let plan: Plan

beforeAll(async () => {
  plan = await planWithAgent(held.server)
}, 60_000)

type Version = { id: string; reason: string; authors: Array<{ kind: string; name: string; app?: string }> }

/** GET `path` of the REST API as the plan's owner: its JSON answer. */
async function api<T>(path: string): Promise<T> {
  const response = await fetch(`${held.server.url}/api${path}`, {
    headers: { authorization: `Bearer ${plan.owner.token}` },
  })
  expect(response.status).toBe(200)
  return (await response.json()) as T
}

describe("an agent's burst while compactions fall due", () => {
  test('every write of the burst is in an agent version, each holding only the agent, the newest holding all', async () => {
    const { provider } = await editorOnPlan({ ...plan, server: held.server }, 'tess', 'tess laptop')
    try {
      await provider.ready
      const versions = async () =>
        (await api<{ versions: Version[] }>(`/documents/${plan.slug}/versions`)).versions
      const before = (await versions()).length
      const written = Array.from({ length: 12 }, (_, i) => `Burst write ${i}.`)
      for (const text of written) {
        const wrote = await agentAppends(plan, text)
        expect(wrote.isError, wrote.text).toBeFalsy()
      }
      const listed = await eventually(async () => {
        const now = await versions()
        expect(now.length).toBeGreaterThan(before)
        const { markdown } = await api<{ markdown: string }>(`/documents/${plan.slug}/versions/${now[0]!.id}`)
        for (const text of written) expect(markdown).toContain(text)
        return now
      })
      // The compaction due at the fourth row took the burst's version so far; the rest came after.
      const agents = listed.slice(0, listed.length - before)
      expect(agents.length).toBeGreaterThanOrEqual(2)
      for (const version of agents) {
        expect(version.reason).toBe('agent')
        expect(version.authors).toEqual([
          expect.objectContaining({ kind: 'agent', name: 'olive', app: 'ci-bot' }),
        ])
      }
    } finally {
      provider.destroy()
    }
  }, 60_000)
})
