/**
 * The parts of docs/mcp/reference.md the code owns, each a named section the reference script writes
 * between `<!-- generated:NAME start -->` and `<!-- generated:NAME end -->`: the frame's lines
 * (frame-section.ts), the tools (tool-sections.ts, from the registry and the SDK's own tools/list answer),
 * the notes' exact texts (notes-section.ts), the limits (limits-section.ts: the named constants, their values
 * and comments) and the refusals (refusals-section.ts), the texts made by the very functions the tools call,
 * with placeholders for what varies. Nothing here is a copy of a text the code holds.
 */
import type { Tool as ListedTool } from '@modelcontextprotocol/sdk/types.js'
import { TOOLS } from '../tools/index.ts'
import type { Section } from './format.ts'
import { frameSection } from './frame-section.ts'
import { limitsSection } from './limits-section.ts'
import { notesSection } from './notes-section.ts'
import { refusalsSection } from './refusals-section.ts'
import { toolSection, toolsOverview } from './tool-sections.ts'

export type { Section } from './format.ts'
export { REFERENCE_PATH, ROOT } from './root.ts'

/** Every generated section, in the order the reference shows them. */
export function generatedSections(listed: readonly ListedTool[]): Section[] {
  const perTool = TOOLS.map((tool) => {
    const entry = listed.find((l) => l.name === tool.name)
    if (!entry) throw new Error(`tools/list does not list ${tool.name}`)
    return toolSection(tool, entry)
  })
  return [
    frameSection(),
    toolsOverview(listed),
    ...perTool,
    notesSection(),
    limitsSection(),
    refusalsSection(),
  ]
}
