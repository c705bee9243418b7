/**
 * A process holding only what an idle server of ours cannot go below, for the peer group's idle RSS row
 * (bench/lib/peer.ts): the floors it is read against, in the same run and at the same instants.
 *
 *   bun bench/lib/idle-floor.ts bare       Bun answering HTTP (Bun.serve), nothing imported
 *   bun bench/lib/idle-floor.ts database   the same, with the server's database layer opened and asked one
 *                                          query: `openDatabase` of db/client.ts on DATA_DIR or DATABASE_URL,
 *                                          as the server opens it (Prisma's client and query compiler, its
 *                                          driver adapter, and on PGlite the database thread)
 *
 * Prints `ready` on standard output once listening, then waits to be ended. Started with the same
 * collect-on-signal preload as the servers, so each reading follows a full collection in every process.
 */
const kind = process.argv[2]
if (kind !== 'bare' && kind !== 'database') throw new Error(`idle-floor: unknown kind ${kind}`)

if (kind === 'database') {
  // Imported here: the bare floor loads none of it.
  const { databaseTarget, openDatabase } = await import('@collab/hocuspocus.server/src/db/client.ts')
  const db = await openDatabase(
    databaseTarget({
      dataDir: process.env.DATA_DIR ?? '',
      databaseUrl: process.env.DATABASE_URL || undefined,
    }),
  )
  await db.prisma.$queryRawUnsafe('SELECT 1')
  process.on('SIGTERM', () => {
    void db.close().finally(() => process.exit(0))
  })
} else {
  process.on('SIGTERM', () => process.exit(0))
}
Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('ok') })
console.log('ready')

export {}
