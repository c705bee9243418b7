/**
 * Attribution with several instances (PostgreSQL and Redis): each instance names the authors of the
 * changes its own editors and agents made; a change that reaches it through Redis is attributed by the
 * instance that received it, so nobody is named twice and no change goes without its author.
 */
import { describe, expect, test } from 'bun:test'
import { FRAGMENT_NAME } from '@collab/doc-schema'
import { callText, connectClient, mcpUrlOf } from '@collab/test-support/mcp'
import { editorsOnBoth, eventually, TWO_INSTANCES, useTwoTestServers } from '@collab/test-support/server'
import * as Y from 'yjs'

describe.skipIf(!TWO_INSTANCES)('attribution with two instances (postgres, Redis)', () => {
  const pair = useTwoTestServers({ versionMinIntervalMs: 0, versionPauseMs: 150, versionAgentPauseMs: 150 })

  test('a person typing on B and an agent writing on A are each named once, by their own instance', async () => {
    const { owner, room, onA, onB } = await editorsOnBoth(pair.a, pair.b, 'ivan', 'Shared')
    try {
      const bot = await pair.a.services.tokens.issue(owner.user.id, {
        scopes: ['read', 'write'],
        label: 'bot',
      })
      if (bot.kind === 'error') throw new Error(bot.message)
      const agent = await connectClient(mcpUrlOf(pair.a), bot.value.token)
      const slug = (await pair.a.services.db.prisma.document.findUniqueOrThrow({ where: { room } })).slug
      try {
        const fragment = onB.doc.getXmlFragment(FRAGMENT_NAME)
        const paragraph = new Y.XmlElement('paragraph')
        paragraph.insert(0, [new Y.XmlText('Typed on B.')])
        fragment.insert(fragment.length, [paragraph])
        await eventually(async () => {
          const { text } = await callText(agent, 'list_versions', { slug })
          expect(text).toContain('after a pause in editing')
        })
        await callText(agent, 'append_to_document', { slug, markdown: 'Written on A.' })
        const listed = await eventually(async () => {
          const { text } = await callText(agent, 'list_versions', { slug })
          expect(text).toContain("after an agent's write")
          return text
        })
        const lines = listed.split('\n').filter((line) => line.startsWith('version '))
        const person = lines.filter((line) => line.includes('ivan (editor via API token'))
        const bots = lines.filter((line) => line.includes(`ivan's agent via API token "bot"`))
        expect(person.length).toBe(1)
        expect(bots.length).toBe(1)
        expect(person[0]).toContain('after a pause in editing')
        expect(bots[0]).toContain("after an agent's write")
        // The agent's version names only the agent: the person's change was named by B's version before.
        expect(bots[0]).not.toContain('ivan (editor')
      } finally {
        await agent.close()
      }
    } finally {
      onA.destroy()
      onB.destroy()
    }
    // Two instances, a pause version and an agent's version over MCP: on CI's loaded machine past 60 s once.
  }, 120_000)
})
