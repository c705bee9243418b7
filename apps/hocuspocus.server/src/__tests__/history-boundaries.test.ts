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

// The agent's pause is long enough for a test's quick writes to be one burst on a loaded machine, and
// short enough for a version waiting on it to come within `eventually`.
const plan = useHistoryPlan({ versionPauseMs: 30_000, versionAgentPauseMs: 4_000 })

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

const liveMarkdown = (room = plan.room) =>
  documentToMarkdown(plan.server.collab.hocuspocus.documents.get(room)!.getXmlFragment(FRAGMENT_NAME))

/** The versions of document `slug`, newest first. */
async function versionsOf(slug: string): Promise<Version[]> {
  return (await api(`/documents/${slug}/versions`)).body.versions as Version[]
}

/** A document of the test's own (olive's, as the plan), so the versions listed are that test's. */
async function ownDocument(title: string) {
  const created = await plan.server.services.documents.create(plan.owner.user.id, {
    title,
    markdown: '## Intro\n\nHello there.\n',
  })
  if (created.kind === 'error') throw new Error(created.message)
  return { ...plan, slug: created.value.slug, room: created.value.room }
}

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

  test("with a person in the document, an agent's burst of writes is one version of those writes alone, taken as soon as the person's next typing is stored", async () => {
    const own = await ownDocument('Burst')
    const persistence = plan.server.collab.persistence
    const { provider } = await editorOnPlan(own, 'rhea', 'rhea laptop')
    try {
      await provider.ready
      await eventually(() => expect(persistence.pendingCount()).toBe(0), 10_000, 'stored')
      const before = await versionsOf(own.slug)
      for (const text of ['Burst one.', 'Burst two.', 'Burst three.']) {
        const wrote = await agentAppends(own, text)
        expect(wrote.isError, wrote.text).toBeFalsy()
      }
      typeAfterHello(provider, ' Rhea typed after.')
      const versions = await eventually(async () => {
        const now = await versionsOf(own.slug)
        expect(now.length).toBe(before.length + 1)
        return now
      })
      const agentVersion = versions[0]!
      expect(agentVersion.reason).toBe('agent')
      expect(agentVersion.authors).toEqual([
        expect.objectContaining({ kind: 'agent', name: 'olive', app: 'ci-bot' }),
      ])
      const markdown = (await api(`/documents/${own.slug}/versions/${agentVersion.id}`)).body
        .markdown as string
      expect(markdown).toContain('Burst one.\n\nBurst two.\n\nBurst three.')
      expect(markdown).not.toContain('Rhea typed after.')
      // The typing after it is stored and waits for a version of its own (the person's pause).
      expect(liveMarkdown(own.room)).toContain('Hello there. Rhea typed after.')
    } finally {
      provider.destroy()
    }
  })

  test("a person's typing between two writes of one agent ends the first write's version: three versions, each holding one author's change", async () => {
    const own = await ownDocument('Between')
    const persistence = plan.server.collab.persistence
    const { provider } = await editorOnPlan(own, 'saul', 'saul laptop')
    try {
      await provider.ready
      await eventually(() => expect(persistence.pendingCount()).toBe(0), 10_000, 'stored')
      const before = await versionsOf(own.slug)
      expect((await agentAppends(own, 'First write.')).isError).toBeFalsy()
      typeAfterHello(provider, ' Saul typed between.')
      await eventually(() => expect(persistence.pendingCount()).toBe(0), 10_000, 'typing stored')
      expect((await agentAppends(own, 'Second write.')).isError).toBeFalsy()
      const versions = await eventually(async () => {
        const now = await versionsOf(own.slug)
        expect(now.length).toBe(before.length + 3)
        return now
      })
      const [second, typing, first] = versions as [Version, Version, Version]
      expect([first.reason, typing.reason, second.reason]).toEqual(['agent', 'pause', 'agent'])
      expect(typing.authors).toEqual([expect.objectContaining({ kind: 'person', name: 'saul' })])
      const markdownOf = async (v: Version) =>
        (await api(`/documents/${own.slug}/versions/${v.id}`)).body.markdown as string
      const [firstMd, typingMd, secondMd] = (await Promise.all([first, typing, second].map(markdownOf))) as [
        string,
        string,
        string,
      ]
      expect(firstMd).toContain('First write.')
      expect(firstMd).not.toContain('Saul typed between.')
      expect(typingMd.replace(' Saul typed between.', '')).toBe(firstMd)
      expect(secondMd.replace('\n\nSecond write.', '')).toBe(typingMd)
    } finally {
      provider.destroy()
    }
  }, 30_000)

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
