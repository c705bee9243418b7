/**
 * The web editor's bundle (apps/web), built with Bun's own bundler: at install (`postinstall` runs
 * scripts/build-web.ts) or, failing that, at the first request that needs it, and cached on disk under
 * `node_modules/.cache/collab-web/<hash>/`, where the hash covers the app's and doc-schema's sources,
 * the lockfile, the dependency patches and Bun's version. So a server starts without a build step, a changed source gets a new
 * bundle, and several processes (tests, instances) share one. Files are served from memory.
 */
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import type { Logger } from '../logger.ts'

const ROOT = resolve(import.meta.dir, '../../../..')
const ENTRY = join(ROOT, 'apps/web/src/main.ts')
const SOURCE_DIRS = [join(ROOT, 'apps/web/src'), join(ROOT, 'packages/doc-schema/src')]
const CACHE_DIR = join(ROOT, 'node_modules/.cache/collab-web')
const MANIFEST = 'manifest.json'

export type WebBundle = {
  /** The script's and stylesheets' URLs for the page. */
  script: string
  styles: string[]
  files: Map<string, BundleFile>
}

/** One file of the bundle; scripts and styles also gzipped (a 600 KB script travels as ~170 KB). */
export type BundleFile = { bytes: Uint8Array<ArrayBuffer>; gzip?: Uint8Array<ArrayBuffer>; type: string }

type Manifest = { script: string; styles: string[] }

function sourceFiles(dir: string): string[] {
  const out: string[] = []
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue
    const path = join(entry.parentPath, entry.name)
    if (path.includes('__tests__')) continue
    out.push(path)
  }
  return out.sort()
}

/** The cache key: every source file's path and bytes, the lockfile, Bun's version. */
export function bundleHash(): string {
  const hash = createHash('sha256')
  hash.update(Bun.version)
  for (const dir of SOURCE_DIRS) {
    for (const path of sourceFiles(dir)) {
      hash.update(relative(ROOT, path))
      hash.update(readFileSync(path))
    }
  }
  const lock = join(ROOT, 'bun.lock')
  if (existsSync(lock)) hash.update(readFileSync(lock))
  // Patched dependencies (package.json patchedDependencies) change the bundle without changing a source.
  const patches = join(ROOT, 'patches')
  if (existsSync(patches)) for (const path of sourceFiles(patches)) hash.update(readFileSync(path))
  return hash.digest('hex').slice(0, 16)
}

const TYPES: Record<string, string> = {
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  map: 'application/json; charset=utf-8',
}

function readBundle(dir: string): WebBundle {
  const manifest = JSON.parse(readFileSync(join(dir, MANIFEST), 'utf8')) as Manifest
  const files = new Map<string, BundleFile>()
  for (const name of readdirSync(dir)) {
    if (name === MANIFEST) continue
    const ext = name.slice(name.lastIndexOf('.') + 1)
    const bytes = new Uint8Array(readFileSync(join(dir, name)))
    const gzip = ext === 'js' || ext === 'css' ? new Uint8Array(Bun.gzipSync(bytes)) : undefined
    files.set(name, { bytes, gzip, type: TYPES[ext] ?? 'application/octet-stream' })
  }
  return { ...manifest, files }
}

/** Builds the bundle into the cache (when it is not there yet) and returns its directory. */
export async function buildWebBundle(logger?: Pick<Logger, 'info'>): Promise<string> {
  const dir = join(CACHE_DIR, bundleHash())
  if (existsSync(join(dir, MANIFEST))) return dir
  const started = performance.now()
  const result = await Bun.build({
    entrypoints: [ENTRY],
    target: 'browser',
    minify: true,
    sourcemap: 'linked',
    naming: '[name]-[hash].[ext]',
    define: { 'process.env.NODE_ENV': '"production"' },
  })
  if (!result.success) {
    throw new Error(`building the web editor failed: ${result.logs.map((log) => String(log)).join('; ')}`)
  }
  // Built beside the final directory, then renamed into place: a concurrent build never sees half.
  const temp = `${dir}.${process.pid}.${Date.now()}.tmp`
  mkdirSync(temp, { recursive: true })
  const manifest: Manifest = { script: '', styles: [] }
  for (const output of result.outputs) {
    const name = output.path.slice(output.path.lastIndexOf('/') + 1)
    writeFileSync(join(temp, name), new Uint8Array(await output.arrayBuffer()))
    if (output.kind === 'entry-point') manifest.script = `/assets/${name}`
    else if (name.endsWith('.css')) manifest.styles.push(`/assets/${name}`)
  }
  writeFileSync(join(temp, MANIFEST), JSON.stringify(manifest))
  try {
    renameSync(temp, dir)
  } catch {
    rmSync(temp, { recursive: true, force: true }) // another process placed the same build first
  }
  // Older builds go (a running server holds its files in memory): the cache keeps one bundle.
  for (const entry of readdirSync(CACHE_DIR)) {
    if (join(CACHE_DIR, entry) !== dir && !entry.endsWith('.tmp')) {
      rmSync(join(CACHE_DIR, entry), { recursive: true, force: true })
    }
  }
  logger?.info({ ms: Math.round(performance.now() - started), dir }, 'web editor bundle built')
  return dir
}

/** The bundle, loaded once per process (built first when the cache does not hold it). */
export function webBundle(logger: Logger): () => Promise<WebBundle> {
  let loading: Promise<WebBundle> | undefined
  return () => {
    loading ??= buildWebBundle(logger).then(readBundle)
    loading.catch((error: Error) => {
      logger.error({ err: error.message }, 'web editor bundle unavailable')
      loading = undefined
    })
    return loading
  }
}
