/**
 * The server's import drawing: no circles and no arrows running up (issue 25). Every relative import in
 * apps/hocuspocus.server/src counts, type-only ones too (a type import still ties the importer to the
 * imported file's shape). Layers, lowest first:
 *
 * - base: the services' limits, logging, metrics, the database, loopback, the event loop's turns (turns.ts),
 *   the per-user shares, access-change events
 * - domain: documents/, chat/, the stores of auth/ (users, tokens and their scopes, passwords, accounts)
 *   and services.ts, which builds them
 * - edge: what serves them to the outside: collab/ (Hocuspocus), http/ (Hono), the rest of auth/ (sign-in
 *   pages, OAuth); each file of the edge may import the others at its level, never a module above it
 * - modules: modules/mcp
 * - root: config (the one reader of the environment), the composition root and entries, the CLI
 *
 * An arrow from a layer to a higher one fails, as does any circle of files, whatever its layers.
 */
import { describe, expect, test } from 'bun:test'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'

const SRC = resolve(import.meta.dir, '..')

const LAYERS: ReadonlyArray<readonly [name: string, files: RegExp]> = [
  ['base', /^(limits|logger|metrics|loopback|turns|user-shares|access-changes)\.ts$|^db\//],
  [
    'domain',
    /^(documents|chat)\/|^services\.ts$|^auth\/(users|tokens|scopes|passwords|accounts|account-lock|shared-state)\.ts$/,
  ],
  ['edge', /^(collab|http|auth)\//],
  ['modules', /^modules\/mcp\//],
  ['root', /^(config|server|server-database|boot|main|mcp-stdio|first-run)\.ts$|^cli\//],
]

type Graph = Map<string, Set<string>>

function layerOf(file: string): number {
  const at = LAYERS.findIndex(([, files]) => files.test(file))
  if (at < 0) throw new Error(`${file}: in no layer of import-drawing.test.ts; add it to one`)
  return at
}

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name)
    if (name === '__tests__' || name === 'generated') continue
    if (statSync(path).isDirectory()) sourceFiles(path, out)
    else if (name.endsWith('.ts')) out.push(path)
  }
  return out
}

/** `import … from './x.ts'`, `export … from`, `import './x.ts'`, `import('./x.ts')`: relative ones only. */
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(?\s*)['"](\.{1,2}\/[^'"]+)['"]/g

function importGraph(root: string): Graph {
  const graph: Graph = new Map()
  for (const path of sourceFiles(root)) {
    const targets = new Set<string>()
    for (const [, specifier] of readFileSync(path, 'utf8').matchAll(SPECIFIER)) {
      let target = resolve(dirname(path), specifier as string)
      if (!target.endsWith('.ts'))
        target = existsSync(`${target}.ts`) ? `${target}.ts` : join(target, 'index.ts')
      targets.add(relative(root, target))
    }
    graph.set(relative(root, path), targets)
  }
  return graph
}

/** Strongly connected groups of two or more files (Tarjan), each sorted. */
function circles(graph: Graph): string[][] {
  let next = 0
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const found: string[][] = []
  const visit = (file: string) => {
    index.set(file, next)
    low.set(file, next)
    next++
    stack.push(file)
    onStack.add(file)
    for (const target of graph.get(file) ?? []) {
      if (!graph.has(target)) continue
      if (!index.has(target)) {
        visit(target)
        low.set(file, Math.min(low.get(file) as number, low.get(target) as number))
      } else if (onStack.has(target)) {
        low.set(file, Math.min(low.get(file) as number, index.get(target) as number))
      }
    }
    if (low.get(file) === index.get(file)) {
      const group: string[] = []
      let member: string
      do {
        member = stack.pop() as string
        onStack.delete(member)
        group.push(member)
      } while (member !== file)
      if (group.length > 1) found.push(group.sort())
    }
  }
  for (const file of graph.keys()) if (!index.has(file)) visit(file)
  return found
}

function upwardArrows(graph: Graph): string[] {
  const arrows: string[] = []
  for (const [file, targets] of graph) {
    for (const target of targets) {
      if (!graph.has(target)) continue
      const from = layerOf(file)
      const to = layerOf(target)
      if (to > from) arrows.push(`${file} (${LAYERS[from]?.[0]}) -> ${target} (${LAYERS[to]?.[0]})`)
    }
  }
  return arrows.sort()
}

/**
 * Files other than config.ts that read `process.env` (a `process.env.X` or `process.env[…]` read, or the
 * whole object passed on). A bundler `define` key is a string, not a read, and is not counted.
 */
function environmentReaders(root: string): string[] {
  return sourceFiles(root)
    .map((path) => relative(root, path))
    .filter((file) => file !== 'config.ts')
    .filter((file) =>
      /(?<!['"])\bprocess\.env\b(?!\.NODE_ENV['"])/.test(readFileSync(join(root, file), 'utf8')),
    )
    .sort()
}

describe('the server source import drawing', () => {
  const graph = importGraph(SRC)

  test('reads the whole source: the entries, the composition root and every layer are in it', () => {
    expect(graph.size).toBeGreaterThan(100)
    for (const file of [
      'main.ts',
      'server.ts',
      'services.ts',
      'collab/hocuspocus.ts',
      'modules/mcp/module.ts',
    ])
      expect(graph.has(file)).toBe(true)
    expect([...(graph.get('server.ts') ?? [])]).toContain('services.ts')
    const layers = new Set([...graph.keys()].map(layerOf))
    expect(layers.size).toBe(LAYERS.length)
  })

  test('has no circles', () => {
    expect(circles(graph)).toEqual([])
  })

  test('has no arrow from a layer to one above it', () => {
    expect(upwardArrows(graph)).toEqual([])
  })

  test('only config.ts reads the environment', () => {
    expect(environmentReaders(SRC)).toEqual([])
  })

  test('the checks find a circle and an upward arrow when there is one', () => {
    const bad: Graph = new Map([
      ['documents/a.ts', new Set(['documents/b.ts'])],
      ['documents/b.ts', new Set(['chat/c.ts'])],
      ['chat/c.ts', new Set(['documents/a.ts', 'modules/mcp/tool.ts'])],
      ['modules/mcp/tool.ts', new Set(['logger.ts'])],
      ['logger.ts', new Set()],
    ])
    expect(circles(bad)).toEqual([['chat/c.ts', 'documents/a.ts', 'documents/b.ts']])
    expect(upwardArrows(bad)).toEqual(['chat/c.ts (domain) -> modules/mcp/tool.ts (modules)'])
  })
})
