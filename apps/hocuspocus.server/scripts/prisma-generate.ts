/**
 * `prisma generate` without reaching Prisma's engine host.
 *
 * Generating the client needs no engine, but the CLI still tries to download the schema engine and
 * fails offline. Pointing PRISMA_SCHEMA_ENGINE_BINARY at a stub that exits 1 lets generate finish.
 * Runs from the root `postinstall`, so `bun install` on a fresh machine leaves a usable client.
 */
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs'
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
process.exit(proc.exitCode ?? 1)
