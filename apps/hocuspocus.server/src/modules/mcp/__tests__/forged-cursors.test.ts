/**
 * Forged find_documents cursors are refused before any query. The attack: an agent edits the base64 JSON
 * of a cursor (an offset of 2^40, a time in the year -271821, a snapshot id that is not a UUID, a huge list
 * of shown ids) so that the value reaches SQL; it used to fail there and log an error with a stack. Each
 * forged cursor now gets the "cursor:" refusal, and nothing is logged at error level.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Writable } from 'node:stream'
import { DATABASE_KIND } from '@collab/test-support/database'
import { call, connectClient, mcpUrlOf } from '@collab/test-support/mcp'
import { userWithToken, useTestServer } from '@collab/test-support/server'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import pino from 'pino'
import type { RunningServer } from '../../../server.ts'
import { MAX_FIND_LIMIT, MAX_FIND_SNAPSHOT_DOCUMENTS } from '../limits.ts'

/** Every log line the server writes, parsed. */
const logLines: Array<{ level: number; msg?: string }> = []
const capture = new Writable({
  write(chunk, _encoding, done) {
    for (const line of String(chunk).split('\n')) if (line.trim()) logLines.push(JSON.parse(line))
    done()
  },
})
const PINO_ERROR = 50

let server: RunningServer
let client: Client

useTestServer(
  (s) => {
    server = s
  },
  {},
  pino({ level: 'info', base: undefined }, capture),
)
beforeAll(async () => {
  const { user, token } = await userWithToken(server, 'forger')
  for (let i = 0; i < 3; i++) await server.services.documents.create(user.id, { title: `Paged ${i}` })
  client = await connectClient(mcpUrlOf(server), token)
}, 60_000)
afterAll(async () => {
  await client?.close()
}, 60_000)

const forge = (fields: Record<string, unknown>) =>
  Buffer.from(JSON.stringify({ v: 3, q: '', s: 'mine', l: 1, ...fields }), 'utf8').toString('base64url')
const SNAPSHOT = '00000000-0000-4000-8000-000000000000'

describe(`find_documents refuses forged cursors before any query (${DATABASE_KIND})`, () => {
  test('a real cursor still pages (the checks do not refuse what the server gave out)', async () => {
    const first = await call(client, 'find_documents', { limit: 1 })
    const cursor = /cursor: "([^"]+)"/.exec(first.text)?.[1]
    expect(cursor).toBeDefined()
    const second = await call(client, 'find_documents', { limit: 1, cursor })
    expect(second.isError).toBe(false)
    const third = await call(client, 'find_documents', {
      limit: 1,
      cursor: /cursor: "([^"]+)"/.exec(second.text)?.[1],
    })
    expect(third.isError).toBe(false)
  })

  const forged: Array<[string, Record<string, unknown>]> = [
    ['an offset of 2^40', { n: SNAPSHOT, o: 2 ** 40, c: 0 }],
    ['an offset past any snapshot', { n: SNAPSHOT, o: MAX_FIND_SNAPSHOT_DOCUMENTS + 1, c: 0 }],
    ['a negative offset', { n: SNAPSHOT, o: -1, c: 0 }],
    ['a fractional offset', { n: SNAPSHOT, o: 1.5, c: 0 }],
    ['an offset beyond safe integers', { n: SNAPSHOT, o: 1e21, c: 0 }],
    ['a snapshot id that is not a UUID', { n: "x' OR 1=1 --", o: 1, c: 0 }],
    ['a time in the year -271821', { a: '-271821-04-20T00:00:00.000Z', h: '' }],
    ['a time in the year 275760', { a: '+275760-09-13T00:00:00.000Z', h: '' }],
    ['a time Date.parse accepts but toISOString never writes', { a: 'Tue, 01 Jan 1980 00:00:00 GMT', h: '' }],
    ['the 31st of February', { a: '2026-02-31T00:00:00.000Z', h: '' }],
    ['a time before the server existed', { a: '1970-01-01T00:00:00.000Z', h: '' }],
    ['a time far in the future', { a: '9999-12-31T23:59:59.999Z', h: '' }],
    [
      'more shown ids than a page holds',
      { a: new Date().toISOString(), h: '0'.repeat(8 * (MAX_FIND_LIMIT + 1)) },
    ],
  ]
  for (const [what, fields] of forged) {
    test(`${what}: the cursor refusal, nothing logged at error level`, async () => {
      const before = logLines.length
      const { text, isError } = await call(client, 'find_documents', { limit: 1, cursor: forge(fields) })
      expect(isError).toBe(true)
      expect(text).toStartWith('cursor: not a cursor find_documents gave out.')
      const errors = logLines.slice(before).filter((line) => line.level >= PINO_ERROR)
      expect(errors.map((line) => line.msg)).toEqual([])
    })
  }
})
