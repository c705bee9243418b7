/**
 * `prisma generate` without reaching Prisma's engine host.
 *
 * Generating the client needs no engine, but the CLI still tries to download the schema engine and
 * fails offline. Pointing PRISMA_SCHEMA_ENGINE_BINARY at a stub that exits 1 lets generate finish.
 * Runs from the root `postinstall`, so `bun install` on a fresh machine leaves a usable client.
 *
 * Then the client loads Prisma's query compiler (WebAssembly) from a file: the generated client imports it
 * as a JavaScript module holding the 3.4 MB binary as a 4.6 MB base64 string, which a process keeps for
 * its whole life, the string and the module's source alike (issue 30: ~9 MB of every server's idle RSS,
 * measured). The binary is decoded once here, written beside the client, and the client's loader is
 * rewritten to read it; a generated client whose loader is not found as expected fails this script.
 */
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'

const root = resolve(import.meta.dir, '../../..')
const stubDir = mkdtempSync(join(tmpdir(), 'prisma-engine-stub-'))
const stub = join(stubDir, 'schema-engine')
writeFileSync(
  stub,
  '#!/bin/sh\necho "schema engine not available offline; migrations use the wasm engine" >&2\nexit 1\n',
)
chmodSync(stub, 0o755)

const proc = Bun.spawnSync(
  ['bun', 'x', '--bun', 'prisma', 'generate', '--schema', join(root, 'prisma/schema.prisma')],
  {
    cwd: join(root, 'apps/hocuspocus.server'),
    env: {
      ...process.env,
      PRISMA_SCHEMA_ENGINE_BINARY: stub,
      PRISMA_HIDE_UPDATE_MESSAGE: '1',
      CHECKPOINT_DISABLE: '1',
    },
    stdout: 'inherit',
    stderr: 'inherit',
  },
)
if (proc.exitCode !== 0) process.exit(proc.exitCode ?? 1)

/** The generated client's file that loads the query compiler, and the file it loads it from instead. */
const internal = join(root, 'apps/hocuspocus.server/src/db/generated/internal')
const classFile = join(internal, 'class.ts')
const QUERY_COMPILER_FILE = 'query-compiler.wasm'

const source = readFileSync(classFile, 'utf8')
const loader =
  /getQueryCompilerWasmModule: async \(\) => \{\n\s*const \{ wasm \} = await import\("(@prisma\/client\/runtime\/query_compiler_\w+\.\w+\.wasm-base64\.mjs)"\)\n\s*return await decodeBase64AsWasm\(wasm\)\n\s*\},/
const found = loader.exec(source)
if (!found) {
  console.error(`prisma-generate: the query compiler's loader was not found in ${classFile}`)
  process.exit(1)
}
const { wasm } = (await import(Bun.resolveSync(found[1]!, internal))) as { wasm: string }
writeFileSync(join(internal, QUERY_COMPILER_FILE), Buffer.from(wasm, 'base64'))
writeFileSync(
  classFile,
  source.replace(
    loader,
    `getQueryCompilerWasmModule: async () =>
    // prisma-generate.ts: the binary from a file, not a base64 module kept for the process's life
    WebAssembly.compile(await Bun.file(new URL("./${QUERY_COMPILER_FILE}", import.meta.url)).arrayBuffer()),`,
  ),
)
process.exit(0)
