/**
 * Version boundaries follow an agent's write exactly (issue 27): a person's typing just before it is in
 * the version before, and the agent's version holds only its write, so reverting that version takes out
 * only the agent's text. Before, the agent's write landed in the pending pause version of the person's
 * typing (taken after the write, holding both), leaving "undo this agent's version" to undo the person's
 * typing too. Real server (PGlite, or PostgreSQL with TEST_DATABASE_URL), a real provider typing, real MCP
 * SDK clients; the pause is long, so only the boundary at the agent's write can split the two.
 */
import { describe, expect, test } from 'bun:test'
import { documentToMarkdown, FRAGMENT_NAME } from '@collab/doc-schema'
import type { TestProvider } from '@collab/test-support/provider'
import { eventually } from '@collab/test-support/server'
import * as Y from 'yjs'
import { agentAppends, editorOnPlan, useHistoryPlan } from './history-support.ts'

const plan = useHistoryPlan({ versionPauseMs: 30_000 })

type Version = { id: string; reason: string; authors: Array<{ kind: string; name: string; app?: string }> }

async function api(path: string, init: RequestInit = {}) {
  const response = await fetch(`${plan.server.url}/api${path}`, {
    ...init,
    headers: {
      authorization: `Bearer ${plan.owner.token}`,
      'content-type': 'application/json',
      ...init.headers,
    },
  })
  return { status: response.status, body: (await response.json()) as Record<string, any> }
}

const liveMarkdown = () =>
  documentToMarkdown(plan.server.collab.hocuspocus.documents.get(plan.room)!.getXmlFragment(FRAGMENT_NAME))

/** Types `text` into the paragraph "Hello there." of the provider's copy, right after that sentence. */
function typeAfterHello(provider: TestProvider, text: string): void {
  const intro = provider.doc
    .getXmlFragment(FRAGMENT_NAME)
    .toArray()
    .find((node) => node instanceof Y.XmlElement && node.toString().includes('Hello there.')) as Y.XmlElement
  ;(intro.get(0) as Y.XmlText).insert(12, text)
}

/**
 * Once the newest version of document `slug` is the agent's: it and the version before it, having checked
 * that the agent's holds the agent alone (olive through her app ci-bot) and the one before the person
 * `person` alone.
 */
async function agentVersionAndBefore(slug: string, person: string): Promise<[Version, Version]> {
  const [agentVersion, before] = await eventually(async () => {
    const versions = (await api(`/documents/${slug}/versions`)).body.versions as Version[]
    expect(versions[0]?.reason).toBe('agent')
    return versions
  })
  expect(agentVersion!.authors).toEqual([
    expect.objectContaining({ kind: 'agent', name: 'olive', app: 'ci-bot' }),
  ])
  expect(before!.authors).toEqual([expect.objectContaining({ kind: 'person', name: person })])
  return [agentVersion!, before!]
}

describe("version boundaries at an agent's write", () => {
  test("a person's typing just before is in the version before; the agent's holds only its write, and reverting it keeps the typing", async () => {
    const { provider } = await editorOnPlan(plan, 'pat', 'pat laptop')
    try {
      await provider.ready
      typeAfterHello(provider, ' Pat typed this.')
      await eventually(() => expect(liveMarkdown()).toContain('Hello there. Pat typed this.'))
      // The agent writes right after, well within the person's pause.
      const wrote = await agentAppends(plan, 'Agent paragraph.')
      expect(wrote.isError, wrote.text).toBeFalsy()
      // The agent's version: the agent alone, through its app; the one before: the person's typing.
      const [agentVersion, before] = await agentVersionAndBefore(plan.slug, 'pat')
      const markdownOf = async (id: string) =>
        (await api(`/documents/${plan.slug}/versions/${id}`)).body.markdown as string
      const beforeMarkdown = await markdownOf(before.id)
      expect(beforeMarkdown).toContain('Hello there. Pat typed this.')
      expect(beforeMarkdown).not.toContain('Agent paragraph.')
      // Exactly the agent's change between the two.
      expect((await markdownOf(agentVersion.id)).replace('\n\nAgent paragraph.', '')).toBe(beforeMarkdown)
      // Reverting the agent's version takes out only the agent's text.
      const reverted = await api(`/documents/${plan.slug}/revert`, {
        method: 'POST',
        body: JSON.stringify({ versionId: agentVersion.id }),
      })
      expect(reverted.status, JSON.stringify(reverted.body)).toBe(200)
      expect(reverted.body.changed).toBe(true)
      await eventually(() => {
        const markdown = liveMarkdown()
        expect(markdown).toContain('Hello there. Pat typed this.')
        expect(markdown).not.toContain('Agent paragraph.')
        expect(documentToMarkdown(provider.doc.getXmlFragment(FRAGMENT_NAME))).toBe(markdown)
      })
    } finally {
      provider.destroy()
    }
  })

  test("a person's typing stored just before is in the version before, even while the store that holds it is still refreshing the title and search text", async () => {
    // A document of its own, so the versions listed are this test's.
    const created = await plan.server.services.documents.create(plan.owner.user.id, {
      title: 'Window',
      markdown: '## Intro\n\nHello there.\n',
    })
    if (created.kind === 'error') throw new Error(created.message)
    const own = { ...plan, slug: created.value.slug, room: created.value.room }
    const persistence = plan.server.collab.persistence
    const documents = plan.server.services.documents
    // Deterministic window: the store of the person's typing has appended it to the log and is held in its
    // title and search refresh until the agent's write has reached the writer's boundary (beforeWrite).
    const refreshDerived = documents.refreshDerived
    const beforeWrite = persistence.beforeWrite
    let held = false
    let entered!: () => void
    const inRefresh = new Promise<void>((resolve) => {
      entered = resolve
    })
    let release!: () => void
    const released = new Promise<void>((resolve) => {
      release = resolve
    })
    let reached!: () => void
    const atBoundary = new Promise<void>((resolve) => {
      reached = resolve
    })
    const { provider } = await editorOnPlan(own, 'quinn', 'quinn laptop')
    try {
      await provider.ready
      await eventually(() => expect(persistence.pendingCount()).toBe(0), 10_000, 'stored')
      documents.refreshDerived = async (...args) => {
        if (!held) {
          held = true
          entered()
          await released
        }
        return refreshDerived.apply(documents, args)
      }
      persistence.beforeWrite = async (...args) => {
        reached()
        return beforeWrite.apply(persistence, args)
      }
      typeAfterHello(provider, ' Quinn typed this.')
      await inRefresh // the typing is in the log; its store has not finished
      const writing = agentAppends(own, 'Agent paragraph.')
      await atBoundary
      release()
      const wrote = await writing
      expect(wrote.isError, wrote.text).toBeFalsy()
      await agentVersionAndBefore(own.slug, 'quinn')
    } finally {
      release()
      documents.refreshDerived = refreshDerived
      persistence.beforeWrite = beforeWrite
      provider.destroy()
    }
  })
})
