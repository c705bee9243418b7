/**
 * A revert that only deletes (an agent's paragraph taken out) advances no Yjs clock, so the state vector a
 * store confirms cannot show it. The writer (modules/mcp/infra/writer.ts) then read the whole stored
 * content back and merged it on the event loop (~0.6 s for a state of 8 MiB, red-team-history) to learn
 * nothing: it answered "done" whatever it read, even when no store had succeeded. Stores are now numbered
 * (collab/persistence/log-append.ts): a store of a batch taken after the edit holds all of it. Real server
 * (PGlite, or PostgreSQL with TEST_DATABASE_URL), real MCP SDK clients with named API tokens.
 */
import { describe, expect, spyOn, test } from 'bun:test'
import { FRAGMENT_NAME, readPlainText } from '@collab/doc-schema'
import { callText } from '@collab/test-support/mcp'
import { eventually } from '@collab/test-support/server'
import * as Y from 'yjs'
import { agentAppends, useHistoryPlan, useRestoredSpies } from './history-support.ts'

const plan = useHistoryPlan()

/** The document's text as stored (snapshot and log), read from the database. */
async function storedText(): Promise<string> {
  const loaded = await plan.server.services.documents.loadState(plan.room)
  const doc = new Y.Doc()
  if (loaded?.state) Y.applyUpdate(doc, loaded.state)
  return readPlainText(doc.getXmlFragment(FRAGMENT_NAME))
}

/** The agent appends `text`; the version of its write, once taken. */
async function agentVersion(text: string): Promise<number> {
  const before = await versionIds()
  const written = await agentAppends(plan, text)
  expect(written.isError, written.text).toBeFalsy()
  return eventually(async () => {
    const fresh = (await versionIds()).filter((id) => !before.includes(id))
    expect(fresh.length).toBeGreaterThan(0)
    return Math.max(...fresh)
  }, 40_000)
}

async function versionIds(): Promise<number[]> {
  const response = await fetch(`${plan.server.url}/api/documents/${plan.slug}/versions`, {
    headers: { authorization: `Bearer ${plan.owner.token}` },
  })
  const body = (await response.json()) as {
    versions: Array<{ id: string; reason: string; authors: Array<{ app?: string }> }>
  }
  // The agent's own writes (its token is labelled "ci-bot"): a revert by the owner's token is an agent's
  // version too, and it may be taken after the revert was answered (when the document unloads).
  return body.versions
    .filter((v) => v.reason === 'agent' && v.authors.some((a) => a.app === 'ci-bot'))
    .map((v) => Number(v.id))
}

const track = useRestoredSpies()

describe('a revert that only deletes', () => {
  test('is confirmed by the store that follows it, without reading the stored content back', async () => {
    const version = await agentVersion('Taken out again by the owner.')
    const readBack = track(spyOn(plan.server.services.documents, 'loadState'))
    const reverted = await callText(plan.ownerClient, 'revert_changes', {
      slug: plan.slug,
      version_id: version,
    })
    expect(reverted.isError, reverted.text).toBeFalsy()
    expect(reverted.text).toContain(`reverted: the changes of version ${version}`)
    expect(readBack).not.toHaveBeenCalled()
    readBack.mockRestore()
    expect(await storedText()).not.toContain('Taken out again by the owner.') // stored when answered
  })

  test('is answered as not confirmed when the database refuses its store; the retry stores it later', async () => {
    const version = await agentVersion('Refused when taken out.')
    const { prisma } = plan.server.services.db
    await prisma.$executeRawUnsafe(
      'ALTER TABLE document_updates ADD CONSTRAINT refuse_revert_stores CHECK (byte_size < 0) NOT VALID',
    )
    try {
      const reverted = await callText(plan.ownerClient, 'revert_changes', {
        slug: plan.slug,
        version_id: version,
      })
      expect(reverted.isError, reverted.text).toBe(true)
      expect(reverted.text).toContain('storing it was not confirmed')
    } finally {
      await prisma.$executeRawUnsafe('ALTER TABLE document_updates DROP CONSTRAINT refuse_revert_stores')
    }
    // The change is in the live document, and the retry stores it.
    await eventually(async () => expect(await storedText()).not.toContain('Refused when taken out.'), 20_000)
  })
})
