/**
 * `bun run docs:reference`: writes the parts of the MCP contract the code owns. In docs/mcp/reference.md,
 * every section between `<!-- generated:NAME start -->` and `<!-- generated:NAME end -->` (the tools and
 * their arguments, the limits, the notes' exact texts: src/modules/mcp/reference/sections.ts); and
 * docs/mcp/tools-list.json, the tools/list answer a live server must give (a test compares them).
 * The prose around the markers is not touched.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { fillSections } from '../src/modules/mcp/reference/markers.ts'
import { generatedSections, REFERENCE_PATH, ROOT } from '../src/modules/mcp/reference/sections.ts'
import { listedTools, TOOLS_LIST_PATH, toolsListFile } from '../src/modules/mcp/reference/tools-list.ts'

const listed = await listedTools()
const referencePath = resolve(ROOT, REFERENCE_PATH)
const before = readFileSync(referencePath, 'utf8')
const after = fillSections(before, generatedSections(listed))
const toolsListPath = resolve(ROOT, TOOLS_LIST_PATH)
const toolsList = toolsListFile(listed)
const changed: string[] = []
if (after !== before) {
  writeFileSync(referencePath, after)
  changed.push(REFERENCE_PATH)
}
// Compared as JSON: the file is kept in Biome's format (`bun run check` checks it), so it is written, then formatted.
const writtenList = readFileSync(toolsListPath, { encoding: 'utf8', flag: 'a+' })
if (writtenList === '' || !Bun.deepEquals(JSON.parse(writtenList), JSON.parse(toolsList))) {
  writeFileSync(toolsListPath, toolsList)
  const biome = Bun.spawnSync([resolve(ROOT, 'node_modules/.bin/biome'), 'format', '--write', toolsListPath])
  if (biome.exitCode !== 0) throw new Error(`biome format ${TOOLS_LIST_PATH}: ${biome.stderr.toString()}`)
  changed.push(TOOLS_LIST_PATH)
}
process.stdout.write(changed.length === 0 ? 'up to date\n' : `wrote ${changed.join(', ')}\n`)
