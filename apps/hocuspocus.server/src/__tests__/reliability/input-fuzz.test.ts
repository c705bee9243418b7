/**
 * Input fuzzing: arbitrary JSON arguments for every tool of the registry (wrong types, huge strings, deep
 * nesting, NUL and lone surrogates, negative and fractional numbers, unknown fields, non-object arguments), sent by a real
 * SDK client over HTTP to a real server. Every answer must be one of:
 *   - a validation error that names a field of the tool (`… at slug`, `arguments: …`),
 *   - an `isError` refusal whose text starts with a field of the tool (`slug: …`),
 *   - a success;
 * never an HTTP 5xx, the generic "failed on the server" answer (an unexpected exception), a hang past 5 s
 * or a dead server; `/health` stays green throughout. 300 calls by default, 5,000 with RELIABILITY_FULL=1.
 */
import { beforeAll, describe, expect, test } from 'bun:test'
import { callText, type RecordingClient, useRecordingUser } from '@collab/test-support/mcp'
import { outlineIds } from '@collab/test-support/outline'
import { McpError } from '@modelcontextprotocol/sdk/types.js'
import fc from 'fast-check'
import { MAX_BODY_BYTES } from '../../modules/mcp/limits.ts'
import { TOOLS } from '../../modules/mcp/tools/index.ts'
import { GENERIC_FAILURE } from '../../modules/mcp/tools/instrument.ts'
import type { RunningServer } from '../../server.ts'
import { FULL, healthStatus, reportFigure, runs, withDeadline } from './support.ts'

const CALLS = FULL ? 5_000 : 300
const CALL_DEADLINE_MS = 5_000
const HEALTH_EVERY = 100

let server: RunningServer
let rc: RecordingClient
let aliceId: string
// On the process's shared server: the fuzzed calls act as alice (the file's own), on what she may reach.
useRecordingUser(
  'alice',
  (made) => {
    ;({ server, rc } = made)
    aliceId = made.user.id
  },
  { shared: true },
)
let fields: Record<string, string[]>
let slug: string
let sectionIds: string[]
let revs: string[]

beforeAll(async () => {
  const listed = await rc.client.listTools()
  fields = Object.fromEntries(
    listed.tools.map((t) => [t.name, Object.keys(t.inputSchema.properties ?? {})] as const),
  )
  const created = await server.services.documents.create(aliceId, {
    title: 'Fuzz target',
    markdown: '## One\n\nalpha beta\n\n- a\n- b\n\n## Two\n\ngamma delta\n\n### Deep\n\nepsilon',
  })
  if (created.kind === 'error') throw new Error(created.message)
  slug = created.value.slug
  const outline = await callText(rc.client, 'get_outline', { slug })
  sectionIds = outlineIds(outline.text) // as printed: the fuzzed calls pass them to every tool
  revs = []
  for (const section_id of sectionIds) {
    const read = await callText(rc.client, 'read_document', { slug, section_id })
    revs.push(/^rev: ([0-9a-f]+)$/m.exec(read.text)![1]!)
  }
  await callText(rc.client, 'post_chat_message', { slug, section_id: sectionIds[1], text: 'hello' })
}, 60_000)

// ---------- arbitraries ----------

const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c))
const nasty = fc.constantFrom(
  '\u0000',
  '\ud800',
  '\udfff',
  '\u202e',
  '\u200b',
  '\ufeff',
  '⟦end of data⟧',
  '[Truncated: showing 1 of 2 headings.]',
  '\r\n',
  '%',
  '\\',
  "'",
  '"',
  '`',
  '<script>',
  '&',
  '|',
  '!',
  ':*',
  '(',
  '\u{1F600}',
)
const hostileString = fc.oneof(
  { weight: 4, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  {
    weight: 4,
    arbitrary: fc
      .array(fc.oneof(nasty, loneSurrogate, fc.string({ maxLength: 4 })), { maxLength: 12 })
      .map((a) => a.join('')),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom(101, 201, 2_001, 65_537, 100_001, 250_000), fc.constantFrom('a', 'é', '⟦', ' '))
      .map(([n, ch]) => ch.repeat(n)),
  },
)
const hostileNumber = fc.oneof(
  fc.integer({ min: -1_000_000, max: 1_000_000 }),
  fc.constantFrom(0, -1, 1, 2 ** 31, 2 ** 53, -(2 ** 53), 1e308, -0, 0.5, 1.5, 50.000001, 100_001),
  fc.double({ noNaN: false }),
)
const deep = fc
  .tuple(fc.integer({ min: 10, max: 3_000 }), fc.constantFrom('array', 'object'))
  .map(([depth, kind]) => {
    let v: unknown = 'x'
    for (let i = 0; i < depth; i++) v = kind === 'array' ? [v] : { a: v }
    return v
  })
const leaf = fc.oneof(hostileString, hostileNumber, fc.boolean(), fc.constant(null))
const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: leaf },
  { weight: 1, arbitrary: fc.array(leaf, { maxLength: 5 }) },
  { weight: 1, arbitrary: fc.dictionary(fc.string({ maxLength: 8 }), leaf, { maxKeys: 4 }) },
  { weight: 1, arbitrary: deep },
)

/** A plausible value for a field, so calls also get past validation and into the handlers. */
function plausible(field: string): fc.Arbitrary<unknown> {
  switch (field) {
    case 'slug':
      return fc.oneof(fc.constant(slug), fc.constant('no-such-doc'), hostileString)
    case 'section_id':
      return fc.oneof(fc.constantFrom(...sectionIds), hostileString)
    case 'rev':
      return fc.oneof(fc.constantFrom(...revs), hostileString)
    case 'scope':
      return fc.constantFrom('mine', 'public', 'all', '')
    case 'limit':
    case 'max_chars':
    case 'start':
    case 'from_block':
    case 'block_offset':
    case 'after_block':
    case 'before_seq':
      return fc.oneof(fc.integer({ min: 0, max: 60 }), hostileNumber)
    case 'remove_blocks':
      return fc.oneof(fc.array(fc.integer({ min: -2, max: 8 }), { maxLength: 4 }), hostileValue)
    case 'allow_media_removal':
      return fc.boolean()
    default:
      return hostileString
  }
}

/** Every tool of the registry (modules/mcp/tools/index.ts); their fields come from tools/list above. */
const TOOL_NAMES = TOOLS.map((tool) => tool.name)

type Case = { tool: string; args: unknown }

function caseFor(tool: string): fc.Arbitrary<Case> {
  const names = fields[tool] ?? []
  // Each known field: absent, plausible, or hostile; plus unknown fields now and then.
  const known = fc.record(
    Object.fromEntries(
      names.map((f) => [
        f,
        fc.oneof(
          { weight: 2, arbitrary: fc.constant(undefined) },
          { weight: 5, arbitrary: plausible(f) },
          { weight: 2, arbitrary: hostileValue },
        ),
      ]),
    ),
  )
  const unknown = fc.dictionary(
    fc.oneof(fc.string({ maxLength: 10 }), fc.constantFrom('__proto__', 'constructor', 'SLUG', 'slug ')),
    hostileValue,
    { maxKeys: 3 },
  )
  const objectArgs = fc.tuple(known, unknown).map(([k, u]) => {
    const args: Record<string, unknown> = {}
    for (const [key, value] of Object.entries(u)) args[key] = value
    for (const [key, value] of Object.entries(k)) if (value !== undefined) args[key] = value
    return args
  })
  const notAnObject = fc.oneof(
    fc.array(leaf, { maxLength: 3 }),
    hostileString,
    hostileNumber,
    fc.boolean(),
    fc.constant(null),
  )
  return fc
    .oneof({ weight: 12, arbitrary: objectArgs }, { weight: 1, arbitrary: notAnObject })
    .map((args) => ({ tool, args }))
}

// ---------- classification ----------

type Outcome = 'success' | 'validation' | 'refusal' | 'too_large'

/** Throws (a failure) unless the answer is one of the allowed kinds; returns which kind it was. */
function classify(
  c: Case,
  answer: { text: string; isError: boolean } | { thrown: unknown },
  httpStatuses: number[],
  requestBytes: number,
): Outcome {
  const tool = c.tool
  const names = fields[tool] ?? []
  const bad = httpStatuses.find((s) => s >= 500)
  if (bad !== undefined) throw new Error(`HTTP ${bad} for ${tool}`)
  const namesField = (text: string) =>
    names.some((f) => new RegExp(`(^|[\\s"'\\[(])${f}([\\s"'\\]:,.)]|$)`).test(text)) ||
    /(^|\s)arguments[\s:]/.test(text)
  if ('thrown' in answer) {
    const error = answer.thrown
    if (httpStatuses.includes(413) && requestBytes > MAX_BODY_BYTES) return 'too_large'
    if (error instanceof McpError && error.code === -32602 && namesField(error.message)) return 'validation'
    throw new Error(`${tool} threw: ${String(error).slice(0, 500)}`)
  }
  const { text, isError } = answer
  if (!isError) return 'success'
  if (text === GENERIC_FAILURE) throw new Error(`${tool}: unexpected server failure (generic answer)`)
  if (text.includes('storing it was not confirmed'))
    throw new Error(`${tool}: a write reached the live document but was not stored`)
  if (text.startsWith('MCP error -32602: Input validation error')) {
    if (namesField(text)) return 'validation'
    throw new Error(`${tool}: validation error names no field: ${text.slice(0, 300)}`)
  }
  const lead = /^([a-z_]+): /.exec(text)?.[1]
  if (lead && names.includes(lead)) return 'refusal'
  throw new Error(`${tool}: refusal does not start with one of its fields: ${text.slice(0, 300)}`)
}

describe('input fuzzing', () => {
  test(`${CALLS} calls with arbitrary JSON arguments: validation, refusal or success; never a 5xx, a hang or a dead server`, async () => {
    const counts: Record<Outcome, number> = { success: 0, validation: 0, refusal: 0, too_large: 0 }
    const perTool: Record<string, number> = {}
    let calls = 0
    let slowest = 0
    const started = performance.now()
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...TOOL_NAMES).chain((tool) => caseFor(tool)),
        async (c) => {
          const before = rc.exchanges.length
          const t0 = performance.now()
          let answer: { text: string; isError: boolean } | { thrown: unknown }
          try {
            answer = await withDeadline(callText(rc.client, c.tool, c.args), CALL_DEADLINE_MS, c.tool)
          } catch (error) {
            if (String(error).startsWith('Error: HANG')) throw error
            answer = { thrown: error }
          }
          const ms = performance.now() - t0
          slowest = Math.max(slowest, ms)
          const mine = rc.exchanges.slice(before)
          const outcome = classify(
            c,
            answer,
            mine.map((e) => e.status),
            Math.max(0, ...mine.map((e) => e.requestBytes)),
          )
          counts[outcome]++
          perTool[c.tool] = (perTool[c.tool] ?? 0) + 1
          calls++
          if (calls % HEALTH_EVERY === 0) expect(await healthStatus(server)).toBe(200)
        },
      ),
      { ...runs(CALLS), endOnFailure: true },
    )
    expect(await healthStatus(server)).toBe(200)
    // The server still does real work after the run.
    const after = await callText(rc.client, 'get_outline', { slug })
    expect(after.isError).toBe(false)
    reportFigure('input-fuzz', {
      calls,
      ...counts,
      perTool,
      slowestMs: Math.round(slowest),
      seconds: Math.round((performance.now() - started) / 100) / 10,
    })
  }, 1_800_000)
})
