/**
 * The pieces of the load and soak run (`soak.ts`): MCP clients that loop over a mix of reads and writes
 * and classify every answer, editor providers that type, the latency record, and the canonical form of a
 * document used to decide that every copy converged.
 */
import { FRAGMENT_NAME, fragmentToJSON } from '@collab/doc-schema'
import { outlineEntries } from '@collab/test-support/outline'
import { connectProvider, type TestProvider } from '@collab/test-support/provider'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import * as Y from 'yjs'

/** A call that takes longer than this is a failure (a hang), not a slow success. */
export const CALL_DEADLINE_MS = 10_000

export type Outcome =
  | { class: 'ok' }
  /** An answer the tool gives by contract under concurrency (a stale rev): correct, not a failure. */
  | { class: 'refused'; kind: string }
  | { class: 'rate_limited' }
  | { class: 'failure'; kind: string; detail: string }

/** Refusals a correct server gives to a correct client under concurrent edits, per tool. */
const EXPECTED_REFUSALS: Record<string, string[]> = {
  edit_blocks: ['rev'],
  replace_text: ['rev', 'old_text'],
}

const GENERIC_FAILURE = 'The call failed on the server'

/** Classifies a tool answer. A refusal the soak's own arguments should never cause is a failure. */
export function classifyAnswer(tool: string, result: CallToolResult): Outcome {
  const text = result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n')
  if (result.isError !== true) return { class: 'ok' }
  if (text.startsWith('rate limit:') || text.startsWith('server time:')) return { class: 'rate_limited' }
  if (text.startsWith(GENERIC_FAILURE))
    return { class: 'failure', kind: 'generic server failure', detail: text }
  if (text.includes('not confirmed')) return { class: 'failure', kind: 'write not confirmed', detail: text }
  if (text.startsWith('The database is unavailable'))
    return { class: 'failure', kind: 'database unavailable', detail: text }
  const field = /^([a-z_]+):/.exec(text)?.[1] ?? '(no field)'
  if (EXPECTED_REFUSALS[tool]?.includes(field)) return { class: 'refused', kind: `${tool} ${field}` }
  return { class: 'failure', kind: `unexpected refusal (${field})`, detail: text }
}

/** Classifies a call that threw: an HTTP status, a JSON-RPC error, a transport error, or the deadline. */
export function classifyError(error: unknown): Outcome {
  const message = error instanceof Error ? error.message : String(error)
  if (message.startsWith('HANG:')) return { class: 'failure', kind: 'timeout', detail: message }
  const status = (error as { code?: unknown }).code
  if (/HTTP \d{3}|Error POSTing/.test(message))
    return {
      class: 'failure',
      kind: `http ${/\b([45]\d\d)\b/.exec(message)?.[1] ?? 'error'}`,
      detail: message,
    }
  if (typeof status === 'number' && status < 0)
    return { class: 'failure', kind: `json-rpc ${status}`, detail: message }
  return { class: 'failure', kind: 'transport error', detail: message }
}

/** Per-tool latencies and outcome counts, shared by every client of a run. */
export class Recorder {
  readonly latencies = new Map<string, number[]>()
  readonly outcomes = new Map<string, number>()
  readonly failures: Array<{ tool: string; kind: string; detail: string }> = []

  record(tool: string, ms: number, outcome: Outcome): void {
    if (outcome.class !== 'failure') {
      const list = this.latencies.get(tool) ?? []
      list.push(ms)
      this.latencies.set(tool, list)
    }
    const key =
      outcome.class === 'refused' || outcome.class === 'failure'
        ? `${outcome.class}:${outcome.kind}`
        : outcome.class
    this.count(`${tool}|${key}`)
    if (outcome.class === 'failure') this.failures.push({ tool, kind: outcome.kind, detail: outcome.detail })
  }

  private count(key: string): void {
    this.outcomes.set(key, (this.outcomes.get(key) ?? 0) + 1)
  }

  /** Calls of `tool` whose outcome key satisfies `match` (all tools when `tool` is undefined). */
  total(tool: string | undefined, match: (key: string) => boolean = () => true): number {
    let sum = 0
    for (const [key, n] of this.outcomes) {
      const [t, k] = key.split('|') as [string, string]
      if ((tool === undefined || t === tool) && match(k)) sum += n
    }
    return sum
  }

  tools(): string[] {
    return [...new Set([...this.outcomes.keys()].map((k) => k.split('|')[0]!))].sort()
  }

  /** Counts by outcome key across tools (`refused:edit_blocks rev`, `rate_limited`, `failure:timeout`…). */
  byOutcome(): Map<string, number> {
    const totals = new Map<string, number>()
    for (const [key, n] of this.outcomes) {
      const k = key.split('|')[1]!
      totals.set(k, (totals.get(k) ?? 0) + n)
    }
    return totals
  }
}

/** Nearest-rank percentile of an unsorted list (0 for an empty one). */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!
}

/** A seeded document and its headings (ids are stable: the soak adds and removes no heading). */
export type SoakDocument = { slug: string; room: string; sections: Section[] }

export type WorkerOptions = {
  mcpUrl: string
  token: string
  documents: SoakDocument[]
  /** Headings MCP writes target; the last heading of each document is the editors' section. */
  recorder: Recorder
  /** A phrase every text the soak writes holds, so the log check can look for it. */
  phrase: string
  deadline: number
  random: () => number
  /** Pause between operations, in ms (uniform 0..thinkMs). */
  thinkMs: number
  /** Wait before connecting, so a hundred clients ramp up instead of arriving in one instant. */
  startDelayMs: number
}

export type Section = { id: string; title: string }

/**
 * One MCP client: a real SDK Client over Streamable HTTP with a bearer token, looping until the deadline.
 * Reads: get_outline, read_document by section, find_documents, list_chat_rooms, read_chat_thread.
 * Writes: edit_blocks and replace_text (each with the rev of a read_document just before it),
 * append_to_document, post_chat_message. The mix gives about 70% read calls and 30% write calls.
 */
export async function runMcpWorker(options: WorkerOptions): Promise<{ calls: number }> {
  const { recorder, random, documents, phrase } = options
  await Bun.sleep(options.startDelayMs)
  const client = new Client({ name: 'soak', version: '1.0.0' })
  const transport = new StreamableHTTPClientTransport(new URL(options.mcpUrl), {
    requestInit: { headers: { Authorization: `Bearer ${options.token}` } },
  })
  try {
    await withDeadline(client.connect(transport), CALL_DEADLINE_MS, 'initialize')
  } catch (error) {
    recorder.record('initialize', 0, classifyError(error))
    return { calls: 0 }
  }
  const sections = new Map<string, Section[]>(documents.map((d) => [d.slug, d.sections]))
  let calls = 0
  let serial = 0
  const pick = <T>(list: T[]): T => list[Math.floor(random() * list.length)]!

  /** One tool call, timed, classified and recorded; the text when it succeeded, else null. */
  async function call(tool: string, args: Record<string, unknown>): Promise<string | null> {
    calls++
    const started = performance.now()
    let outcome: Outcome
    let text: string | null = null
    try {
      const result = (await withDeadline(
        client.callTool({ name: tool, arguments: args }),
        CALL_DEADLINE_MS,
        `${tool} call`,
      )) as CallToolResult
      outcome = classifyAnswer(tool, result)
      if (outcome.class === 'ok') {
        text = result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n')
        const bad = badAnswer(tool, text)
        if (bad) outcome = { class: 'failure', kind: `malformed answer (${bad})`, detail: text.slice(0, 300) }
      }
    } catch (error) {
      outcome = classifyError(error)
    }
    recorder.record(tool, performance.now() - started, outcome)
    if (outcome.class === 'rate_limited') await Bun.sleep(1_000)
    return outcome.class === 'ok' ? text : null
  }

  async function sectionsOf(doc: SoakDocument): Promise<Section[] | null> {
    const known = sections.get(doc.slug)
    if (known) return known
    const text = await call('get_outline', { slug: doc.slug })
    if (text === null) return null
    const found = outlineEntries(text).map(({ title, id }) => ({ title, id }))
    sections.set(doc.slug, found)
    return found
  }

  /** A heading MCP edits: mostly the sections nobody types in, now and then the editors' one. */
  function editTarget(list: Section[]): Section | undefined {
    const body = list.filter((s) => s.title.startsWith('Part '))
    if (body.length === 0 || random() < 0.1) return list[list.length - 1]
    return pick(body)
  }

  async function readSection(doc: SoakDocument, section: Section) {
    const text = await call('read_document', { slug: doc.slug, section_id: section.id })
    if (text === null) return null
    const rev = /^rev: ([0-9a-f]+)$/m.exec(text)?.[1]
    if (!rev) return null
    const blocks = [...text.matchAll(/^\[(\d+)\] (.*)$/gm)].map((m) => ({ n: Number(m[1]), text: m[2]! }))
    return { rev, blocks, text }
  }

  while (Date.now() < options.deadline) {
    const doc = pick(documents)
    const list = await sectionsOf(doc)
    if (list && list.length > 0) {
      const r = random()
      const section = pick(list)
      serial++
      if (r < 0.19) {
        sections.delete(doc.slug)
        if ((await sectionsOf(doc)) === null) sections.set(doc.slug, list)
      } else if (r < 0.42) {
        await readSection(doc, section)
      } else if (r < 0.52) {
        await call('find_documents', random() < 0.5 ? { query: 'soak' } : { query: phrase, limit: 10 })
      } else if (r < 0.58) {
        await call('list_chat_rooms', { slug: doc.slug })
      } else if (r < 0.655) {
        await call('read_chat_thread', { slug: doc.slug, section_id: section.id })
      } else if (r < 0.745) {
        const target = editTarget(list)
        const read = target && (await readSection(doc, target))
        if (target && read) {
          const ours = read.blocks.filter((b) => b.text.startsWith('Soak line'))
          const last = ours[ours.length - 1]
          await call('edit_blocks', {
            slug: doc.slug,
            section_id: target.id,
            rev: read.rev,
            markdown: `Soak line ${phrase} ${serial}.`,
            ...(ours.length > 3 && last ? { remove_blocks: [last.n] } : {}),
          })
        }
      } else if (r < 0.805) {
        const target = editTarget(list)
        const read = target && (await readSection(doc, target))
        const mark = read && /\bmark-[a-z0-9]+\b/.exec(read.text)?.[0]
        if (target && read && mark) {
          await call('replace_text', {
            slug: doc.slug,
            section_id: target.id,
            rev: read.rev,
            old_text: mark,
            new_text: `mark-${serial.toString(36)}${Math.floor(random() * 1e6).toString(36)}`,
          })
        }
      } else if (r < 0.905) {
        await call('append_to_document', { slug: doc.slug, markdown: `Appended ${phrase} ${serial}.` })
      } else {
        await call('post_chat_message', {
          slug: doc.slug,
          section_id: section.id,
          text: `chat ${phrase} ${serial}`,
        })
      }
    }
    if (options.thinkMs > 0) await Bun.sleep(Math.floor(random() * options.thinkMs))
  }
  await client.close().catch(() => {})
  return { calls }
}

/** A success whose text does not have the shape the contract promises; null when it does. */
function badAnswer(tool: string, text: string): string | null {
  switch (tool) {
    case 'edit_blocks':
    case 'replace_text':
    case 'append_to_document':
      // Then a line per section a heading created, and the section blocks joined (docs/mcp/reference.md).
      return /^section_id: [\w-]+\nrev: [0-9a-f]+(?:\n(?:created|changed): section_id: [\w-]+, rev: [0-9a-f]+)*$/.test(
        text,
      )
        ? null
        : 'no section_id and rev'
    case 'post_chat_message':
      return /^seq: \d+/.test(text) ? null : 'no seq'
    case 'read_chat_thread':
      return text.includes('⟦end of data⟧') || text.startsWith('No messages under') ? null : 'no frame'
    case 'list_chat_rooms':
      return text.includes('⟦end of data⟧') || text.startsWith('No chat rooms') ? null : 'no frame'
    default:
      return text.includes('⟦end of data⟧') ? null : 'no frame'
  }
}

function withDeadline<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`HANG: ${what} took longer than ${ms} ms`)), ms)
  })
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer))
}

const WORDS = 'the plan needs one more pass over costs and dates before we share it with the team'.split(' ')

/** An editor provider typing into its own paragraphs at the end of a document, a key at a time. */
export type Typist = {
  doc: SoakDocument
  editor: TestProvider
  /** Local updates sent (one per key). */
  updates(): number
  /** Stops typing; resolves once the typing loop has ended. */
  stop(): Promise<void>
}

export async function startTypist(
  serverUrl: string,
  doc: SoakDocument,
  token: string,
  random: () => number,
  keyIntervalMs: [number, number],
): Promise<Typist> {
  const editor = connectProvider(serverUrl, doc.room, token)
  await withDeadline(editor.ready, CALL_DEADLINE_MS, `provider sync of ${doc.slug}`)
  let updates = 0
  editor.doc.on('update', (_update: Uint8Array, origin: unknown) => {
    if (origin !== editor.provider) updates++
  })
  let running = true
  const fragment = editor.doc.getXmlFragment(FRAGMENT_NAME)
  const loop = (async () => {
    let text: Y.XmlText | null = null
    let typed = 0
    while (running) {
      if (!text || typed > 60) {
        const paragraph = new Y.XmlElement('paragraph')
        const fresh = new Y.XmlText()
        paragraph.insert(0, [fresh])
        fragment.push([paragraph])
        text = fresh
        typed = 0
      }
      const word = `${WORDS[Math.floor(random() * WORDS.length)]!} `
      for (const char of word) {
        if (!running) break
        // A deleted paragraph (an MCP edit removed it) takes the typing with it; start a new one.
        if (text._item?.deleted || (text.parent as Y.XmlElement | null)?._item?.deleted) {
          text = null
          break
        }
        text.insert(text.length, char)
        typed++
        const [low, high] = keyIntervalMs
        await Bun.sleep(low + Math.floor(random() * (high - low)))
      }
    }
  })()
  return {
    doc,
    editor,
    updates: () => updates,
    async stop() {
      running = false
      await loop
    },
  }
}

/** What two copies of a document must share to count as the same: state vector and content. */
export function canonical(doc: Y.Doc): string {
  const vector = [...Y.decodeStateVector(Y.encodeStateVector(doc)).entries()].sort(([a], [b]) => a - b)
  return JSON.stringify({ vector, content: fragmentToJSON(doc.getXmlFragment(FRAGMENT_NAME)) })
}

/** A short description of how two canonical forms differ, without document text. */
export function describeDifference(a: string, b: string): string {
  const pa = JSON.parse(a) as { vector: Array<[number, number]>; content: unknown }
  const pb = JSON.parse(b) as { vector: Array<[number, number]>; content: unknown }
  const va = new Map(pa.vector)
  const vb = new Map(pb.vector)
  const clients = [...new Set([...va.keys(), ...vb.keys()])].filter((c) => va.get(c) !== vb.get(c))
  const contentSame = JSON.stringify(pa.content) === JSON.stringify(pb.content)
  return `${clients.length} client clocks differ${
    clients.length
      ? ` (${clients
          .slice(0, 3)
          .map((c) => `${c}: ${va.get(c) ?? 0} vs ${vb.get(c) ?? 0}`)
          .join(', ')})`
      : ''
  }, content ${contentSame ? 'same' : 'differs'}`
}

/** The shared seeded generator, so a soak run can be replayed by its seed. */
export { seededRandom } from '../../../../../packages/doc-schema/src/__tests__/seeded-random.ts'
