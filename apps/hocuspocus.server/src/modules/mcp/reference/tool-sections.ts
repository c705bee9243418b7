/** The tools' sections: the overview table (kind, scope, annotations) and one section a tool (its arguments). */
import type { Tool as ListedTool } from '@modelcontextprotocol/sdk/types.js'
import { TOOLS } from '../tools/index.ts'
import { mayUse, type Tool } from '../tools/tool.ts'
import { code, number, type Section, table } from './format.ts'

/** The token scope that lists and calls a tool of this kind. */
const scopeOf = (tool: Tool) =>
  mayUse(['read'], tool) ? 'read' : mayUse(['read', 'suggest'], tool) ? 'write or suggest' : 'write'

export function toolsOverview(listed: readonly ListedTool[]): Section {
  const rows = TOOLS.map((tool) => {
    const a = listed.find((l) => l.name === tool.name)?.annotations ?? {}
    const yesNo = (hint: boolean | undefined) => (hint ? 'yes' : 'no')
    return [
      `[${code(tool.name)}](#${tool.name})`,
      tool.title,
      tool.kind,
      scopeOf(tool),
      yesNo(a.readOnlyHint),
      yesNo(a.destructiveHint),
      yesNo(a.idempotentHint),
      yesNo(a.openWorldHint),
    ]
  })
  return {
    name: 'tools',
    text: table(
      ['tool', 'title', 'kind', 'token scope', 'readOnly', 'destructive', 'idempotent', 'openWorld'],
      rows,
    ),
  }
}

type JsonSchema = {
  type?: string
  enum?: unknown[]
  items?: JsonSchema
  minLength?: number
  maxLength?: number
  minimum?: number
  maximum?: number
  maxItems?: number
  default?: unknown
  description?: string
}

/** Bounds a JSON Schema states (the SDK's rendering of the zod schema); integers' safe maximum is no bound. */
function boundsOf(schema: JsonSchema): string {
  const range = (min: number | undefined, max: number | undefined, unit: string) => {
    const top = max === undefined || max >= Number.MAX_SAFE_INTEGER ? undefined : max
    if (min !== undefined && top !== undefined) return `${number(min)}–${number(top)}${unit}`
    if (top !== undefined) return `≤ ${number(top)}${unit}`
    if (min !== undefined && min > 0) return `≥ ${number(min)}${unit}`
    if (min === 0) return '≥ 0'
    return ''
  }
  if (schema.type === 'string') return range(schema.minLength, schema.maxLength, ' characters')
  if (schema.type === 'integer' || schema.type === 'number') return range(schema.minimum, schema.maximum, '')
  if (schema.type === 'array') {
    const items = schema.items ? boundsOf(schema.items) : ''
    const count = schema.maxItems === undefined ? '' : `at most ${number(schema.maxItems)} entries`
    return [count, items && `each ${items}`].filter(Boolean).join(', ')
  }
  return ''
}

function typeOf(schema: JsonSchema): string {
  if (schema.enum) return schema.enum.map((v) => code(String(v))).join(' or ')
  if (schema.type === 'array') return `${schema.items ? typeOf(schema.items) : 'value'}[]`
  return schema.type ?? 'any'
}

export function toolSection(tool: Tool, listed: ListedTool): Section {
  const schema = listed.inputSchema as { properties?: Record<string, JsonSchema>; required?: string[] }
  const required = new Set(schema.required ?? [])
  const args = Object.entries(schema.properties ?? {}).map(([name, field]) => [
    code(name),
    typeOf(field),
    required.has(name) ? 'yes' : 'no',
    field.default === undefined ? '' : code(JSON.stringify(field.default)),
    boundsOf(field),
    field.description ?? '',
  ])
  const heading = `${listed.title} · kind ${tool.kind} · token scope ${scopeOf(tool)}`
  const lines = [
    `*${heading}.* Description, as tools/list sends it:`,
    '',
    `> ${listed.description}`,
    '',
    args.length === 0
      ? 'No arguments.'
      : table(['argument', 'type', 'required', 'default', 'bounds', 'description'], args),
  ]
  return { name: `tool:${tool.name}`, text: lines.join('\n') }
}
