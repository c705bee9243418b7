/**
 * Suggestions in Debian's Chromium (issue 27), on a real server: an agent whose token has scope suggest
 * proposes three changes through MCP; the owner opens the document, sees them drawn (proposed text
 * underlined in <ins>, text proposed for deletion struck through in <del>) and listed with the agent's name
 * and app, accepts one and rejects two; the export then holds exactly the accepted change. axe-core finds
 * no serious or critical violation with the suggestions shown.
 */

import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { CHROMIUM, type Page } from '@collab/test-support/chromium'
import { DATABASE_KIND } from '@collab/test-support/database'
import { callText } from '@collab/test-support/mcp'
import { readMetric } from '@collab/test-support/metrics'
import { outlineId } from '@collab/test-support/outline'
import { eventually } from '@collab/test-support/server'
import { openedBy, seriousViolations, useOwnerWithAgent } from './web-support.ts'

const listed = (page: Page) =>
  page.$$eval('.suggestions li', (items) => items.map((item) => item.textContent ?? ''))

/** Clicks the Accept or Reject button of the listed suggestion whose text holds `text`. */
async function decide(page: Page, text: string, button: 'Accept' | 'Reject'): Promise<void> {
  const item = await page.waitForSelector(`xpath/.//li[contains(., "${text}")]`)
  const target = await item!.$(`xpath/.//button[text()="${button}"]`)
  await target!.click()
}

describe.skipIf(!CHROMIUM)(`suggestions in Chromium (${DATABASE_KIND})`, () => {
  const world = useOwnerWithAgent(
    'nora',
    { scopes: ['read', 'suggest'], label: 'Copy Editor' },
    { title: 'Trip', markdown: '## Days\n\nMonday: the museum.\n\nTuesday: a long hike.' },
  )

  async function section() {
    const sectionId = outlineId(
      (await callText(world.agent, 'get_outline', { slug: world.slug })).text,
      'Days',
    )
    const read = await callText(world.agent, 'read_document', { slug: world.slug, section_id: sectionId })
    return { section_id: sectionId, rev: /^rev: (\S+)$/m.exec(read.text)![1]! }
  }

  test('an agent proposes three changes; the owner accepts one and rejects two; the export holds exactly the accepted one', async () => {
    for (const change of [
      { old_text: 'the museum', new_text: 'the old town' },
      { old_text: 'a long hike', new_text: 'a boat trip' },
    ]) {
      const proposed = await callText(world.agent, 'replace_text', {
        slug: world.slug,
        ...(await section()),
        ...change,
      })
      expect(proposed.text).toContain('suggestion: ')
    }
    const appended = await callText(world.agent, 'append_to_document', {
      slug: world.slug,
      markdown: 'Wednesday: rest.',
    })
    expect(appended.text).toContain('suggestion: ')

    const page = await openedBy(world.browser, world.server, 'nora', world.slug)
    await page.waitForFunction(() => document.querySelectorAll('.suggestions li').length === 3)
    // Drawn as marked text, not by colour alone: <ins> is underlined, <del> struck through.
    const decorations = await page.$$eval('.ProseMirror ins, .ProseMirror del', (elements) =>
      elements.map((e) => `${e.tagName} ${e.textContent} ${getComputedStyle(e).textDecorationLine}`),
    )
    expect(decorations).toContain('DEL museum line-through')
    expect(decorations).toContain('INS old town underline')
    const items = await listed(page)
    expect(items[0]).toContain('nora via Copy Editor')
    expect(await seriousViolations(page)).toEqual([])
    // `WEB_SCREENSHOTS=docs bun test web-suggestions` saves the box as docs/web.md's picture.
    if (process.env.WEB_SCREENSHOTS) {
      await page.screenshot({ path: join(process.env.WEB_SCREENSHOTS, 'web-suggestions.png') })
    }

    // Accept the old town, reject the boat trip and the new line, each by its own button.
    await decide(page, 'old town', 'Accept')
    await page.waitForFunction(() => document.querySelectorAll('.suggestions li').length === 2)
    await decide(page, 'boat', 'Reject')
    await page.waitForFunction(() => document.querySelectorAll('.suggestions li').length === 1)
    await decide(page, 'Wednesday', 'Reject')
    await page.waitForFunction(() => document.querySelector('.suggestions')?.hasAttribute('hidden'))

    const expected = '# Trip\n\n## Days\n\nMonday: the old town.\n\nTuesday: a long hike.\n'
    // The decisions reach the server as the person's edits; the export reads the stored document.
    await eventually(async () => {
      const response = await fetch(`${world.server.url}/api/documents/${world.slug}/markdown`, {
        headers: { authorization: `Bearer ${world.owner.token}` },
      })
      expect(await response.text()).toBe(expected)
    })
    expect(await page.$$eval('.ProseMirror ins, .ProseMirror del', (e) => e.length)).toBe(0)
  })

  test("words a person types in the middle of an agent's proposal are theirs, not part of it", async () => {
    const proposed = await callText(world.agent, 'replace_text', {
      slug: world.slug,
      ...(await section()),
      old_text: 'a long hike',
      new_text: 'a boat trip on the lake',
    })
    expect(proposed.text).toContain('suggestion: ')
    const page = await openedBy(world.browser, world.server, 'nora', world.slug)
    const inserted = await page.waitForSelector('xpath/.//ins[contains(., "boat trip")]')
    const proposedText = () => page.$$eval('.ProseMirror ins', (e) => e.map((x) => x.textContent).join(''))
    const before = await proposedText()
    expect(before).toContain('boat trip')
    // The middle of the proposed words: ProseMirror carries a mark over to text typed inside it.
    const box = (await inserted!.boundingBox())!
    await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2)
    await page.keyboard.type('MINE ')
    await page.waitForFunction(() => document.querySelector('.ProseMirror')?.textContent?.includes('MINE'))
    expect(await proposedText()).toBe(before)

    // On the server too: the proposal lists only the agent's words, and the person's are accepted content.
    await eventually(async () => {
      const listed = (await callText(world.agent, 'list_suggestions', { slug: world.slug })).text
      expect(listed).toContain('the lake')
      expect(listed).not.toContain('MINE')
      const response = await fetch(`${world.server.url}/api/documents/${world.slug}/markdown`, {
        headers: { authorization: `Bearer ${world.owner.token}` },
      })
      expect(await response.text()).toContain('MINE')
    })
    // The page made its words its own; the server had nothing to repair (its repair is for other editors).
    expect(await readMetric(world.server.url, 'collab_own_text_unmarked_total')).toBe(0)
  })
})
