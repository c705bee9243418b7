/**
 * docs/mcp/reference.md holds, between markers, what the code owns (the tools, the limits, the notes'
 * texts). This fails when those sections differ from what `bun run docs:reference` writes now, and checks
 * how the script places sections: a new tool gets a section of its own, a removed one is not dropped silently.
 */
import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { endMarker, fillSections, markedSections, staleSections, startMarker } from '../reference/markers.ts'
import { generatedSections, REFERENCE_PATH, ROOT } from '../reference/sections.ts'
import { listedTools } from '../reference/tools-list.ts'
import { TOOLS } from '../tools/index.ts'

describe('docs/mcp/reference.md', () => {
  test('every generated section equals what the code makes now', async () => {
    const doc = readFileSync(resolve(ROOT, REFERENCE_PATH), 'utf8')
    const stale = staleSections(doc, generatedSections(await listedTools()))
    expect(
      stale,
      `${REFERENCE_PATH}: generated section(s) ${stale.join(', ')} differ from the code; run \`bun run docs:reference\` and commit the result`,
    ).toEqual([])
  })

  test('every tool in the registry has its section, and every section has its tool', () => {
    const doc = readFileSync(resolve(ROOT, REFERENCE_PATH), 'utf8')
    const toolSections = [...markedSections(doc).keys()].filter((name) => name.startsWith('tool:'))
    expect(toolSections).toEqual(TOOLS.map((tool) => `tool:${tool.name}`))
  })
})

describe('fillSections', () => {
  const section = (name: string, text: string) => ({ name, text })
  const marked = (name: string, text: string) => `${startMarker(name)}\n${text}\n${endMarker(name)}`

  test('rewrites only what is between the markers', () => {
    const doc = `# Title\n\nprose before\n\n${marked('tools', 'old table')}\n\nprose after\n`
    expect(fillSections(doc, [section('tools', 'new table')])).toBe(
      `# Title\n\nprose before\n\n${marked('tools', 'new table')}\n\nprose after\n`,
    )
  })

  test('a new tool gets a heading and its section after the prose of the tool before it', () => {
    const doc = `### \`a\`\n\n${marked('tool:a', 'A')}\n\nprose about a\n\n## Next chapter\n`
    const filled = fillSections(doc, [section('tool:a', 'A'), section('tool:b', 'B')])
    expect(filled).toBe(
      `### \`a\`\n\n${marked('tool:a', 'A')}\n\nprose about a\n\n### \`b\`\n\n${marked('tool:b', 'B')}\n\n## Next chapter\n`,
    )
    expect(staleSections(filled, [section('tool:a', 'A'), section('tool:b', 'B')])).toEqual([])
  })

  test('markers no code fills (a removed tool) are refused, not dropped with their prose', () => {
    const doc = `${marked('tool:a', 'A')}\n\n${marked('tool:gone', 'G')}\n`
    expect(() => fillSections(doc, [section('tool:a', 'A')])).toThrow(/tool:gone/)
    expect(staleSections(doc, [section('tool:a', 'A')])).toEqual(['tool:gone'])
  })
})
