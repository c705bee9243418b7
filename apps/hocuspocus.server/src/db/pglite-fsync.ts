/**
 * Whether the embedded database's commits reach the disk before they are answered (PGLITE_FSYNC).
 *
 * PGlite starts PostgreSQL with `-F` (fsync off) among its default start parameters, and dropping that
 * alone changes nothing on disk: in PGlite's WebAssembly build `fdatasync()` (PostgreSQL's default
 * `wal_sync_method` on Linux) is a no-op, and `fsync()` asks the file system's stream for an `fsync`
 * operation that Emscripten's NODEFS does not have (strace: 0 fsync calls per commit either way). So a
 * synced start (1) drops `-F`, (2) sets `wal_sync_method=fsync`, the one method whose call goes through
 * the file system (`open_datasync` would be another; checkpoints would still call `fsync()` on the data
 * files), and (3) opens the folder through `SyncedNodeFS`, NODEFS with that operation added: it calls the
 * operating system's fsync on the real file, so a commit returns once its WAL is on the disk, and a
 * checkpoint syncs the data files and pg_control as PostgreSQL means to.
 */
import { fsyncSync } from 'node:fs'
import { PGlite } from '@electric-sql/pglite'
import { NodeFS } from '@electric-sql/pglite/nodefs'

/** PostgreSQL's start parameters for the embedded database, with `extra` (`-c name=value` pairs). */
export function pgliteStartParams(fsync: boolean, extra: string[]): string[] {
  if (!fsync) return [...PGlite.defaultStartParams, ...extra]
  return [...PGlite.defaultStartParams.filter((p) => p !== '-F'), '-c', 'wal_sync_method=fsync', ...extra]
}

/** What NODEFS keeps of an open file: the operating system's descriptor (none for some special files). */
type NodeStream = { nfd?: number }
/** The part of PGlite's Emscripten module this file touches: NODEFS's file operations. */
type WithNodefs = {
  NODEFS?: {
    stream_ops: { fsync?: (stream: NodeStream) => number }
    /** Runs a Node file call, turning its error into the errno PostgreSQL sees (a failed fsync: PANIC). */
    tryFSOperation<T>(call: () => T): T
  }
}
type NodeFsInit = Awaited<ReturnType<NodeFS['init']>>
type PreRun = NonNullable<NodeFsInit['emscriptenOpts']['preRun']>[number]

/**
 * PGlite's NodeFS (its file system for a folder on disk) whose files can be synced: `fsync()` inside
 * PostgreSQL becomes the operating system's fsync of the same file (a directory included: PostgreSQL syncs
 * a folder after creating or renaming a file in it). `onSync` (tests) is told each time.
 */
export class SyncedNodeFS extends NodeFS {
  constructor(
    dataDir: string,
    private readonly onSync?: () => void,
  ) {
    super(dataDir)
  }

  override async init(...args: Parameters<NodeFS['init']>): Promise<NodeFsInit> {
    const { emscriptenOpts } = await super.init(...args)
    const addSync: PreRun = (mod) => {
      const nodefs = (mod as unknown as WithNodefs).NODEFS
      if (!nodefs)
        throw new Error("PGlite's NODEFS was not found: the embedded database cannot sync its files")
      nodefs.stream_ops.fsync = (stream) => {
        const fd = stream.nfd
        if (fd !== undefined) nodefs.tryFSOperation(() => fsyncSync(fd))
        this.onSync?.()
        return 0
      }
    }
    return { emscriptenOpts: { ...emscriptenOpts, preRun: [...(emscriptenOpts.preRun ?? []), addSync] } }
  }
}
