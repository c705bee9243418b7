/**
 * Prisma's schema engine as WebAssembly, driven directly.
 *
 * The CLI's `migrate deploy|diff|status` need a native engine downloaded from Prisma's host, which is
 * not reachable from the machines this project installs on. The wasm engine ships inside an npm package
 * and talks to the database through the same driver adapters as the client.
 */
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import {
  bindMigrationAwareSqlAdapterFactory,
  type SqlMigrationAwareDriverAdapterFactory,
} from '@prisma/driver-adapter-utils'
import * as bindings from '@prisma/schema-engine-wasm/schema_engine_bg'

export type SchemaEngine = Awaited<ReturnType<typeof bindings.SchemaEngine.new>>

let initialised: Promise<void> | undefined

function initWasm(): Promise<void> {
  initialised ??= (async () => {
    const require = createRequire(import.meta.url)
    // The package's exports map does not list the .wasm file: find it beside the entry module.
    const wasmPath = join(dirname(require.resolve('@prisma/schema-engine-wasm')), 'schema_engine_bg.wasm')
    const module = new WebAssembly.Module(await Bun.file(wasmPath).arrayBuffer())
    const instance = new WebAssembly.Instance(module, { './schema_engine_bg.js': bindings as never })
    bindings.__wbg_set_wasm(instance.exports)
    ;(instance.exports as { __wbindgen_start: () => void }).__wbindgen_start()
  })()
  return initialised
}

/** Engine log lines are JSON; only warnings and errors are worth passing on. */
export type EngineLog = (line: string) => void

export type EngineHandle = { engine: SchemaEngine; close(): Promise<void> }

/**
 * The engine opens its own adapter connections and does not close them when freed. On PostgreSQL such a
 * connection can keep the migration advisory lock, stalling the next migrate for its 10 s lock timeout,
 * so every connection it opened is disposed of with the engine.
 */
export async function createSchemaEngine(
  datamodel: { path: string; content: string },
  adapterFactory: SqlMigrationAwareDriverAdapterFactory,
  log: EngineLog = () => {},
): Promise<EngineHandle> {
  await initWasm()
  const opened: Array<{ dispose(): Promise<void> }> = []
  const tracking: SqlMigrationAwareDriverAdapterFactory = {
    provider: adapterFactory.provider,
    adapterName: adapterFactory.adapterName,
    async connect() {
      const adapter = await adapterFactory.connect()
      opened.push(adapter)
      return adapter
    },
    async connectToShadowDb() {
      const adapter = await adapterFactory.connectToShadowDb()
      opened.push(adapter)
      return adapter
    },
  }
  const engine = await bindings.SchemaEngine.new(
    { datamodels: [[datamodel.path, datamodel.content]] },
    log,
    bindMigrationAwareSqlAdapterFactory(tracking),
  )
  return {
    engine,
    async close() {
      engine.free()
      await Promise.allSettled(opened.map((adapter) => adapter.dispose()))
    },
  }
}
