/**
 * Versions come at a bounded rate (issue 27): an agent's writes to a document nobody has open load and
 * unload it each time, and each would otherwise be a version of its own; with MIN_VERSION_INTERVAL_MS
 * counted from the newest stored automatic version, a burst is one version, and the writes after it
 * still show in changes_since (their authors wait in the snapshot for the next version).
 */
import { describe, expect, test } from 'bun:test'
import { createDocument } from '@collab/test-support/documents'
import { callText, useMcpClients } from '@collab/test-support/mcp'
import { eventually, useTestServer } from '@collab/test-support/server'
import type { RunningServer } from '../server.ts'

let server: RunningServer
useTestServer(
  (s) => {
    server = s
  },
  { versionMinIntervalMs: 60_000 },
)
const mcp = useMcpClients(() => server)

describe('the version rate', () => {
  test('a named version is taken on request within the interval, and changes_since starts from it', async () => {
    const { user, client } = await mcp.user('nina')
    const { slug } = await createDocument(server, user.id, {
      title: 'Named',
      markdown: '## A\n\nText.',
    })
    await callText(client, 'append_to_document', { slug, markdown: 'Before the checkpoint.' })
    const saved = await callText(client, 'save_version', { slug, version_name: 'Before the rewrite' })
    expect(saved.text).toMatch(/^version: \d+$/)
    const id = Number(saved.text.slice('version: '.length))
    const { text: listed } = await callText(client, 'list_versions', { slug })
    expect(listed).toContain(`version ${id} "Before the rewrite"`)
    expect(listed).toContain('named on request')
    await callText(client, 'append_to_document', { slug, markdown: 'After the checkpoint.' })
    const { text } = await callText(client, 'changes_since', { slug, since_version: id })
    expect(text).toContain('After the checkpoint.')
    expect(text).not.toContain('+ [2] Before the checkpoint.')
  })

  test('three writes to a cold document in a burst are one agent version; changes_since shows all three', async () => {
    const { user, client } = await mcp.user('rita')
    const { slug } = await createDocument(server, user.id, {
      title: 'Burst',
      markdown: '## One\n\nFirst.',
    })
    for (const n of [1, 2, 3]) {
      const wrote = await callText(client, 'append_to_document', { slug, markdown: `Write ${n}.` })
      expect(wrote.isError).toBe(false)
    }
    const listed = await eventually(async () => {
      const { text } = await callText(client, 'list_versions', { slug })
      expect(text).toContain("after an agent's write")
      return text
    })
    expect(listed).toContain('versions: 2')
    expect(listed.match(/after an agent's write/g)?.length).toBe(1)
    const first = /^version (\d+) .*document created/m.exec(listed)![1]
    const { text } = await callText(client, 'changes_since', { slug, since_version: Number(first) })
    for (const n of [1, 2, 3]) expect(text).toContain(`+ [${n + 1}] Write ${n}.`)
    expect(text).toContain("rita's agent via API token")
  })
})
