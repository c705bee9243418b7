import { PGlite } from '@electric-sql/pglite'
import { readFileSync } from 'node:fs'
const state = new Uint8Array(readFileSync('/tmp/scratch/big-state.bin'))
const mode = process.argv[2] ?? 'agg'
const db = await PGlite.create(process.argv[3] ?? 'memory://', process.env.SB ? { startParams: [...PGlite.defaultStartParams, '-c', 'shared_buffers=' + process.env.SB] } : {})
await db.exec(`CREATE TABLE s (id int primary key, state bytea)`)
if (mode.includes('external')) await db.exec(`ALTER TABLE s ALTER COLUMN state SET STORAGE EXTERNAL`)
const rss = () => process.memoryUsage().rss >> 20
Bun.gc(true)
const base = rss()
let peak = base
const t = setInterval(() => { peak = Math.max(peak, rss()) }, 2)
const SL = Number(process.env.SL ?? 256 * 1024)
const t0 = performance.now()
await db.transaction(async (tx) => {
  await tx.exec(`${process.env.PARTS ?? 'CREATE TEMP TABLE IF NOT EXISTS state_parts (n int, data bytea) ON COMMIT DELETE ROWS'}`)
  for (let n = 0; n * SL < state.length; n++) {
    await tx.query(`INSERT INTO state_parts VALUES ($1, decode($2, 'base64'))`, [n, Buffer.from(state.subarray(n * SL, (n + 1) * SL)).toString('base64')])
    peak = Math.max(peak, rss())
  }
  console.log('after slices +', peak - base, 'now +', rss() - base, 'mem', JSON.stringify(Object.fromEntries(Object.entries(process.memoryUsage()).map(([k, v]) => [k, v >> 20]))))
  Bun.gc(true)
  console.log('after gc now +', rss() - base, 'mem', JSON.stringify(Object.fromEntries(Object.entries(process.memoryUsage()).map(([k, v]) => [k, v >> 20]))))
  if (mode.includes('direct')) await tx.query(`INSERT INTO s VALUES (1, decode($1, 'base64'))`, [Buffer.from(state).toString('base64')])
  else await tx.query(`INSERT INTO s VALUES (1, (SELECT string_agg(data, ''::bytea ORDER BY n) FROM state_parts))`)
  peak = Math.max(peak, rss())
  await tx.exec(`DELETE FROM state_parts`)
})
peak = Math.max(peak, rss())
clearInterval(t)
console.log(mode, 'write', Math.round(performance.now() - t0), 'ms; rss base', base, 'peak +', peak - base, 'after +', rss() - base)
const size = await db.query(`SELECT pg_column_size(state) AS c FROM s`)
console.log('stored', size.rows[0])
