/**
 * The MCP module uses the SDK's public API only, so an upgrade of @modelcontextprotocol/sdk cannot break
 * it through a part the SDK never promised to keep. A scan of the module's source (tests aside) fails on:
 * - an import of an SDK path that is not one of the public entry points below (or that the package's
 *   `exports` no longer resolves);
 * - a member whose name starts with `_` (the SDK's private fields and methods: `_requestHandlers`,
 *   `_transport`, …), except `_meta`, a field of the MCP protocol itself;
 * - an `as unknown as` cast to a type imported from the SDK (reaching around its types).
 * The scanner is run on known-bad snippets first, so the test shows it can fail.
 */
import { describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'

const MODULE_DIR = join(import.meta.dir, '..')
const SDK = '@modelcontextprotocol/sdk'

/**
 * The SDK entry points the module may import: those the SDK's own documentation (its server, client and
 * transport guides) imports from, plus the explicit `./validation/ajv` export. Its `./*` export makes every
 * file of dist/ importable, helpers included (`server/zod-compat.js`); being reachable is not being public.
 */
const PUBLIC_ENTRY_POINTS = new Set([
  'types.js',
  'inMemory.js',
  'client/index.js',
  'server/index.js',
  'server/mcp.js',
  'server/stdio.js',
  'server/completable.js',
  'server/webStandardStreamableHttp.js',
  'shared/transport.js',
  'shared/protocol.js',
  'validation/ajv',
])

/** Protocol fields that start with `_` but are the MCP wire format's own, not the SDK's privates. */
const PROTOCOL_FIELDS = new Set(['_meta'])

type Finding = { file: string; line: number; problem: string }

/** Comments removed (a comment that names a private member is not a use of it); line breaks kept. */
function withoutComments(source: string): string {
  return source
    .replace(/\/\*[\s\S]*?\*\//g, (comment) => comment.replace(/[^\n]/g, ' '))
    .replace(/(^|[\s;{}(])\/\/[^\n]*/g, '$1')
}

export function scan(file: string, source: string): Finding[] {
  const code = withoutComments(source)
  const findings: Finding[] = []
  const lineOf = (index: number) => code.slice(0, index).split('\n').length
  const sdkNames = new Set<string>()
  for (const match of code.matchAll(
    /import\s+(type\s+)?([\s\S]*?)\s+from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g,
  )) {
    const specifier = match[3] ?? match[4]!
    if (specifier !== SDK && !specifier.startsWith(`${SDK}/`)) continue
    for (const name of (match[2] ?? '').matchAll(/\b([A-Za-z_$][\w$]*)\b(?!\s+as\b)/g)) sdkNames.add(name[1]!)
    const entry = specifier.slice(SDK.length + 1)
    if (!PUBLIC_ENTRY_POINTS.has(entry)) {
      findings.push({
        file,
        line: lineOf(match.index),
        problem: `imports ${specifier}, not a public entry point`,
      })
    } else {
      try {
        Bun.resolveSync(specifier, MODULE_DIR)
      } catch {
        findings.push({ file, line: lineOf(match.index), problem: `imports ${specifier}, not exported` })
      }
    }
  }
  for (const match of code.matchAll(/(?:\?\.|\.)\s*(_[A-Za-z]\w*)|\[\s*['"`](_[A-Za-z]\w*)['"`]\s*\]/g)) {
    const member = match[1] ?? match[2]!
    if (PROTOCOL_FIELDS.has(member)) continue
    findings.push({ file, line: lineOf(match.index), problem: `reads the private member ${member}` })
  }
  for (const match of code.matchAll(/as\s+unknown\s+as\s+([^;,)\n=]+)/g)) {
    const names = [...match[1]!.matchAll(/\b([A-Za-z_$][\w$]*)\b/g)].map((m) => m[1]!)
    const sdkType = names.find((name) => sdkNames.has(name))
    if (sdkType)
      findings.push({
        file,
        line: lineOf(match.index),
        problem: `casts through unknown to the SDK's ${sdkType}`,
      })
  }
  return findings
}

function moduleSources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return entry.name === '__tests__' ? [] : moduleSources(path)
    return entry.name.endsWith('.ts') ? [path] : []
  })
}

describe('the MCP module on the SDK public API', () => {
  test('the scan finds each kind of private use (it can fail)', () => {
    const bad = [
      `import { safeParse } from '${SDK}/server/zod-compat.js'`,
      `import { x } from '${SDK}/dist/esm/server/index.js'`,
      `const h = (server.server as any)._requestHandlers.get('tools/list')`,
      `const t = server['_transport']`,
      `import type { AnySchema } from '${SDK}/types.js'\nconst s = shape as unknown as AnySchema`,
    ]
    for (const snippet of bad)
      expect({ snippet, found: scan('bad.ts', snippet).length > 0 }).toEqual({ snippet, found: true })
    const fine = [
      `import { McpServer } from '${SDK}/server/mcp.js'`,
      `const token = extra._meta?.progressToken // a comment about Protocol._requestHandlers`,
      `const n = value as unknown as number`,
    ]
    for (const snippet of fine)
      expect({ snippet, findings: scan('fine.ts', snippet) }).toEqual({ snippet, findings: [] })
  })

  test('no file of modules/mcp imports an SDK path outside its public entry points or touches a private member', () => {
    const files = moduleSources(MODULE_DIR)
    expect(files.length).toBeGreaterThan(20)
    const findings = files.flatMap((path) => scan(relative(MODULE_DIR, path), readFileSync(path, 'utf8')))
    expect(findings).toEqual([])
  })
})
