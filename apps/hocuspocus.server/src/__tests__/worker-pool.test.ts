/**
 * The documents' worker (documents/worker/pool.ts) on a real Bun Worker: one job at a time, one job of each
 * kind per user waiting or running (the next refused at once), a deadline that ends the worker and refuses
 * the job (the next job gets a new worker), a worker ended as soon as a large job is answered (its heap
 * returned), and shutdown refusing what waits.
 */
import { afterEach, describe, expect, test } from 'bun:test'
import { FRAGMENT_NAME, refuse } from '@collab/doc-schema'
import * as Y from 'yjs'
import { bodyText, createMarkdownExport } from '../documents/export-markdown.ts'
import { derivedOf } from '../documents/stored-parts.ts'
import { markdownText } from '../documents/worker/export.ts'
import { type BuiltImport, buildImport } from '../documents/worker/import.ts'
import { LARGE_JOB_BYTES, SHORT_LANE_JOBS, transferable, WorkerPool } from '../documents/worker/pool.ts'
import { SECTION_READS_BUSY } from '../documents/worker/wording.ts'
import {
  FIRST_SCREEN_BLOCKS,
  FIRST_SCREEN_WORK,
  MAX_FIND_TEXT_CHARS,
  MAX_WAITING_SYNC_ANSWERS_PER_USER,
  MAX_WAITING_WHOLE_READS_PER_USER,
} from '../limits.ts'

/**
 * About `bytes` of prose in sections (a heading and a paragraph of `sentences` sentences). A build's work
 * goes by blocks more than by bytes (and an import reports progress every 2,000 blocks): a test that needs
 * only the bytes (a large job) takes long paragraphs.
 */
function manual(bytes: number, sentences = 10): string {
  const sentence = 'The quick brown fox jumps over the lazy dog while the server keeps every edit. '
  const parts = ['# Manual\n']
  for (let size = 0, i = 0; size < bytes; i++) {
    const part = `\n## Part ${i}\n\n${sentence.repeat(sentences)}\n`
    parts.push(part)
    size += part.length
  }
  return parts.join('')
}

const pools: WorkerPool[] = []
function pool(options?: ConstructorParameters<typeof WorkerPool>[0]): WorkerPool {
  const made = new WorkerPool(options)
  pools.push(made)
  return made
}
afterEach(() => {
  for (const p of pools.splice(0)) p.close()
})

/** `markdown` imported on `jobs` by `user` (`title` its title when it has no heading of its own). */
function imported(jobs: WorkerPool, user: string, markdown: string, title: string) {
  return jobs.build(user, { markdown, fallbackTitle: title }, MAX_FIND_TEXT_CHARS)
}

/** What a test of the jobs after an import starts from: ann's import of `markdown`, built. */
async function importedSource(jobs: WorkerPool, markdown: string, title: string): Promise<BuiltImport> {
  const done = await imported(jobs, 'ann', markdown, title)
  if (done.kind === 'error') throw new Error(done.message)
  return done.value
}

describe('the documents worker pool', () => {
  test('a second import of the same user while the first builds is refused at once; another user waits its turn', async () => {
    const jobs = pool()
    // Refused as soon as asked, whatever the first's size: it is still building (or waiting) then.
    const first = imported(jobs, 'ann', manual(256 << 10), 'A')
    const second = await imported(jobs, 'ann', '# B\n\nb', 'B')
    expect(second).toMatchObject({ kind: 'error', code: 'rate_limited', field: 'markdown' })
    if (second.kind === 'error') expect(second.message).toContain('an import of yours is still being built')
    const other = imported(jobs, 'bea', '# C\n\nc', 'C')
    const [a, c] = await Promise.all([first, other])
    expect(a.kind).toBe('ok')
    expect(c).toMatchObject({ kind: 'ok', value: { title: 'C' } })
    // Once the first has its answer, the same user may import again.
    expect((await imported(jobs, 'ann', '# D\n\nd', 'D')).kind).toBe('ok')
  }, 60_000)

  test("a user's parallel whole reads wait their turn and are all answered; one past those waiting is refused", async () => {
    const jobs = pool()
    const source = await importedSource(jobs, manual(64 << 10), 'R')
    const read = () =>
      jobs.readPrefix('ann', {
        stored: { snapshot: source.state.slice(), updates: [] },
        minChars: 1_000,
        opts: {},
      })
    // An agent's parallel tool calls: the first runs, MAX_WAITING_WHOLE_READS_PER_USER wait for it.
    const reads = Array.from({ length: 1 + MAX_WAITING_WHOLE_READS_PER_USER }, read)
    const past = await read()
    expect(past).toMatchObject({ kind: 'error', code: 'rate_limited', field: 'slug' })
    if (past.kind === 'error') expect(past.message).toContain('whole reads of yours are waiting')
    // A section read waits in the same line: refused too, and told so without the whole read's advice.
    const section = await jobs.readPrefix('ann', {
      key: '',
      base: null,
      update: new Uint8Array(),
      drop: [],
      section: { sectionId: 'x', opts: {}, withSubsections: false },
    })
    expect(section).toMatchObject({ kind: 'error', code: 'rate_limited', message: SECTION_READS_BUSY })
    const answers = await Promise.all(reads)
    expect(answers.map((a) => a.kind)).toEqual(reads.map(() => 'ok'))
    // All answered: the same user reads again at once.
    expect((await read()).kind).toBe('ok')
  }, 60_000)

  test("an import's bytes (a request's body) are given to the worker, not copied, and build what their text builds", async () => {
    const jobs = pool()
    // A BOM and a malformed sequence: decoded on the worker as Request.text() decodes them on the event loop.
    const text = `${manual(256 << 10)}\nEnde: ünïcødé ✦ 𝄞\n`
    const body = new Request('http://x/', {
      method: 'POST',
      body: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text), Buffer.from([0xff, 0x0a])]),
    })
    const bytes = await body.clone().bytes()
    const asText = await jobs.build(
      'ann',
      { markdown: await body.text(), fallbackTitle: 'T' },
      MAX_FIND_TEXT_CHARS,
    )
    const asBytes = await jobs.build('ann', { markdown: bytes, fallbackTitle: 'T' }, MAX_FIND_TEXT_CHARS)
    // Transferred (a 20 MiB file's copy, and its decoding into a string, cost the event loop ~170 ms).
    expect(bytes.byteLength).toBe(0)
    if (asText.kind === 'error' || asBytes.kind === 'error') throw new Error('refused')
    expect(asBytes.value.title).toBe(asText.value.title)
    expect(asBytes.value.text).toBe(asText.value.text)
    // Section ids are drawn at random: the rest of the outline and the content must match.
    const unkeyed = (json: string) => json.replace(/"sectionId":"[^"]*"/g, '')
    expect(unkeyed(asBytes.value.outlineJson) === unkeyed(asText.value.outlineJson)).toBe(true)
    const exported = async (state: Uint8Array) => {
      const file = await jobs.render('ann', { snapshot: state, updates: [] })
      if (file.kind === 'error') throw new Error(file.message)
      return markdownText(file.value)
    }
    const [fromBytes, fromText] = [await exported(asBytes.value.state), await exported(asText.value.state)]
    expect(fromBytes === fromText).toBe(true)
    expect(fromBytes.endsWith('Ende: ünïcødé ✦ 𝄞 \uFFFD\n')).toBe(true) // no BOM, one replacement
  }, 60_000)

  test('an import and an export of the same user run side by side (one of each kind)', async () => {
    const jobs = pool()
    const source = await importedSource(jobs, '# Source\n\nhello', 'S')
    const importing = imported(jobs, 'ann', manual(256 << 10), 'A')
    const exported = await jobs.render('ann', { snapshot: source.state, updates: [] })
    expect(exported.kind === 'ok' && markdownText(exported.value)).toBe('# Source\n\nhello\n')
    expect((await importing).kind).toBe('ok')
  }, 60_000)

  test('an export is answered with its first piece, while the worker renders the rest; stopped midway, its body fails', async () => {
    const jobs = pool()
    const source = await importedSource(jobs, manual(6 << 20), 'M') // ~24 pieces
    const { markdownOf } = createMarkdownExport({
      jobs,
      loadStored: async () => ({
        documentId: 'm',
        snapshot: source.state.slice(),
        updates: [],
        updateBytes: 0,
      }),
      bySlugForAdmin: async () => refuse('not_found', 'unused'),
    })
    /** `user`'s export of the document, as the route gets it. */
    const exportBy = async (user: string) => {
      const body = await markdownOf({ room: 'm', slug: 'm' }, user)
      if (body.kind === 'error') throw new Error(body.message)
      return body.value
    }
    // Whole: the body holds the same bytes as the render kept in one file.
    const whole = await jobs.render('ann', { snapshot: source.state.slice(), updates: [] })
    if (whole.kind === 'error') throw new Error(whole.message)
    expect(whole.value.pieces.length).toBeGreaterThan(10)
    expect(await bodyText(await exportBy('ann'))).toBe(markdownText(whole.value))
    // A reader that goes away after the first piece (a client disconnecting) drops the rest; the render
    // ends as usual (its user's slot with it) and the next export, waiting behind it, runs.
    const leaving = (await exportBy('ann')).getReader()
    expect((await leaving.read()).done).toBe(false)
    await leaving.cancel()
    expect(await bodyText(await exportBy('bob'))).toBe(markdownText(whole.value))
    // Stopped after its first piece: the render was still going (before, the answer waited for all of it,
    // so nothing after it could cut the body), and the body ends in an error, not as a short file.
    const reader = (await exportBy('ann')).getReader()
    const first = await reader.read()
    expect(first.done).toBe(false)
    jobs.close()
    let pieces = 1
    const failed = await (async () => {
      for (;;) {
        const next = await reader.read()
        if (next.done) return null
        pieces++
      }
    })().catch((error: Error) => error)
    expect(failed?.message).toContain('shutting down')
    expect(pieces).toBeLessThan(whole.value.pieces.length)
  }, 120_000)

  test('a job that cannot be posted (a buffer given away before) is refused at once; the next runs', async () => {
    const jobs = pool()
    const source = await importedSource(jobs, '# Source\n\nhello', 'S')
    const given = source.state.slice()
    structuredClone(given.buffer, { transfer: [given.buffer] }) // detached, as after an earlier transfer
    // Before, the failed post left the job running: this answer, and every job after it, waited 60 s.
    const refused = await jobs.render('ann', { snapshot: given, updates: [] })
    expect(refused).toMatchObject({ kind: 'error', code: 'invalid_input' })
    if (refused.kind === 'error') expect(refused.message).toContain('could not be handed to the worker')
    const next = await jobs.render('bob', { snapshot: source.state, updates: [] })
    expect(next.kind === 'ok' && markdownText(next.value)).toBe('# Source\n\nhello\n')
  }, 30_000)

  test('a job past the deadline is stopped (its worker ended) and refused with what to do', async () => {
    const jobs = pool({ deadlineMs: 1 })
    const slow = await imported(jobs, 'ann', manual(4 << 20), 'A')
    expect(slow).toMatchObject({ kind: 'error', code: 'invalid_input', field: 'markdown' })
    if (slow.kind === 'error')
      expect(slow.message).toContain('went 0 s without progress and was stopped; split the file')
  }, 60_000)

  test('a job that keeps reporting progress runs past the deadline without progress, not past its limit in all', async () => {
    // ~10,000 blocks: five reports of progress or so, and phases between them (measured: 6 MiB, nine
    // reports, the whole run 4.8-5.6 times its longest stretch; 3 MiB, five, 3.6-3.7 times).
    const markdown = manual(4 << 20)
    const input = { markdown, fallbackTitle: 'A' }
    // First, how long it runs and its longest stretch without progress (from its start to its answer).
    let last = performance.now()
    let longest = 0
    const measured = pool({
      onProgress: () => {
        const now = performance.now()
        longest = Math.max(longest, now - last)
        last = now
      },
    })
    const start = performance.now()
    const first = await measured.build('ann', input, MAX_FIND_TEXT_CHARS)
    expect(first.kind).toBe('ok')
    const took = performance.now() - start
    longest = Math.max(longest, performance.now() - last)
    // Several reports, so a deadline between the longest stretch and the whole run exists.
    expect(took / longest).toBeGreaterThan(2)
    // Halfway between the two (geometric mean): under the whole run (a flat deadline stopped it, as the
    // old pool did), over the longest stretch without progress.
    const deadlineMs = Math.round(Math.sqrt(took * longest))
    const again = await pool({ deadlineMs }).build('ann', input, MAX_FIND_TEXT_CHARS)
    expect(again.kind === 'error' ? again.message : 'ok').toBe('ok')
    // However steady, a job past its limit in all is stopped, and says so.
    const capped = await pool({ maxJobMs: 1 }).build('ann', input, MAX_FIND_TEXT_CHARS)
    expect(capped).toMatchObject({ kind: 'error', code: 'invalid_input', field: 'markdown' })
    if (capped.kind === 'error')
      expect(capped.message).toContain('took longer than 0 s in all and was stopped')
  }, 120_000)

  test('a large job ends its worker once answered (its heap goes back); a small one keeps it for the next', async () => {
    const jobs = pool()
    const small = await imported(jobs, 'ann', '# S\n\ns', 'S')
    expect(small.kind).toBe('ok')
    expect(jobs.hasWorker).toBe(true)
    // Before, the worker stayed up WORKER_IDLE_MS (30 s) with the heap a 20 MiB import had grown (~500 MB).
    const large = await imported(jobs, 'ann', manual(LARGE_JOB_BYTES, 100), 'L')
    expect(large.kind).toBe('ok')
    expect(jobs.hasWorker).toBe(false)
    // The next job starts a worker of its own.
    if (large.kind === 'error') throw new Error(large.message)
    const exported = await jobs.render('ann', { snapshot: large.value.state, updates: [] })
    expect(exported.kind === 'ok' && markdownText(exported.value).startsWith('# Manual')).toBe(true)
    expect(jobs.hasWorker).toBe(false) // its state is over LARGE_JOB_BYTES too
  }, 60_000)

  test("an import's text and outline, read off the document it built, are those of its state decoded", () => {
    // The build reads them before encoding (no second decode) and collects between its phases; what it
    // stores must be what a store step derives from the state (a list, a table, marks, nested sections).
    const markdown = `${manual(64 * 1024)}\n### Deep\n\n- a **b**\n  - c\n\n| x | y |\n| - | - |\n| 1 | 2 |\n`
    let collections = 0
    const built = buildImport(
      { markdown, fallbackTitle: 'M' },
      MAX_FIND_TEXT_CHARS,
      () => collections++,
      () => collections++,
    )
    if (built.kind === 'error') throw new Error(built.message)
    const derived = derivedOf(built.value.state, MAX_FIND_TEXT_CHARS, true)
    expect({ text: built.value.text, outline: JSON.parse(built.value.outlineJson) }).toEqual(
      JSON.parse(JSON.stringify(derived)),
    )
    // after the parse and at the end (the outline is measured as the document is built, not after)
    expect(collections).toBeGreaterThanOrEqual(2)
  })

  test("an import lets go of the file's bytes once decoded, before the build (the worker's job holds them otherwise)", () => {
    const markdown = manual(64 * 1024)
    const input = { markdown: new TextEncoder().encode(markdown), fallbackTitle: 'M' }
    let heldAtFirstCollection: number | undefined
    const built = buildImport(input, MAX_FIND_TEXT_CHARS, () => {
      heldAtFirstCollection ??= input.markdown.length
    })
    if (built.kind === 'error') throw new Error(built.message)
    expect(heldAtFirstCollection).toBe(0)
    // The same document as built from the text (but for the new ids: its client and its headings').
    const fromText = buildImport({ markdown, fallbackTitle: 'M' }, MAX_FIND_TEXT_CHARS)
    if (fromText.kind === 'error') throw new Error(fromText.message)
    const withoutIds = (json: string) =>
      JSON.stringify(JSON.parse(json), (key, value) => (key === 'sectionId' ? undefined : value))
    expect({ text: built.value.text, outline: withoutIds(built.value.outlineJson) }).toEqual({
      text: fromText.value.text,
      outline: withoutIds(fromText.value.outlineJson),
    })
    // The same content (not the same bytes: each build has a random client id, whose varint length varies).
    const content = (state: Uint8Array) => {
      const doc = new Y.Doc()
      Y.applyUpdate(doc, state)
      return doc
        .getXmlFragment(FRAGMENT_NAME)
        .toString()
        .replace(/ toc-id="[^"]*"/g, '')
    }
    expect(content(built.value.state)).toBe(content(fromText.value.state))
  })

  test("first screens run on the short lane: made while an import runs, never queued behind it; refused past the lane's room", async () => {
    const jobs = pool()
    const source = await importedSource(jobs, '# Notes\n\n## Day\n\nText.', 'N')
    const limits = { maxBlocks: FIRST_SCREEN_BLOCKS, maxWork: FIRST_SCREEN_WORK }
    const stored = () => ({ snapshot: source.state.slice(), updates: [] })
    const screen = await jobs.firstScreen('bea', stored(), limits)
    expect(screen).toMatchObject({ kind: 'ok', value: { blocks: 3, more: false } }) // the title, the heading, the paragraph
    if (screen.kind === 'ok') expect(screen.value.html).toContain('Day')
    expect(jobs.hasShortWorker).toBe(true)
    // A large import keeps the worker of long jobs busy for a while; a first screen does not wait for it
    // (before the short lane it was refused at once, and the page opened without it).
    let importDone = false
    const importing = imported(jobs, 'ann', manual(2 << 20), 'A').then((done) => {
      importDone = true
      return done
    })
    const during = await jobs.firstScreen('bea', stored(), limits)
    expect(during.kind).toBe('ok')
    expect(importDone).toBe(false)
    // The lane takes SHORT_LANE_JOBS at once (one user one of a kind: MAX_JOBS_PER_USER_AND_KIND); the next
    // is refused at once, not queued.
    const users = Array.from({ length: SHORT_LANE_JOBS + 1 }, (_, i) => `reader-${i}`)
    const screens = users.map((user) => jobs.firstScreen(user, stored(), limits))
    const answers = await Promise.all(screens)
    expect(answers.map((a) => a.kind)).toEqual([...Array(SHORT_LANE_JOBS).fill('ok'), 'error'])
    expect(answers[SHORT_LANE_JOBS]).toMatchObject({ kind: 'error', code: 'unavailable' })
    expect((await importing).kind).toBe('ok')
  }, 60_000)

  test("sync answers wait for room on a full short lane, a user's one at a time, refused past the wait or the queue's room", async () => {
    // A document of ~1 MiB: its answer is work enough that the lane stays full while the test asks.
    const doc = new Y.Doc()
    const fragment = doc.getXmlFragment(FRAGMENT_NAME)
    for (let i = 0; i < 2_000; i++) {
      const paragraph = new Y.XmlElement('paragraph')
      paragraph.insert(0, [new Y.XmlText(`Paragraph ${i} `.repeat(40))])
      fragment.insert(fragment.length, [paragraph])
    }
    const state = Y.encodeStateAsUpdate(doc)
    const empty = Y.encodeStateVector(new Y.Doc())
    let key = 0
    const input = () => ({
      key: `doc-${key++}`,
      base: 0,
      parts: [state],
      changes: [],
      vector: empty,
      address: 'a',
    })
    const answers = (results: Awaited<ReturnType<WorkerPool['syncAnswer']>>[]) =>
      results.map((r) =>
        r.kind === 'ok' && !r.value.stale ? 'answered' : r.kind === 'error' ? r.code : 'stale',
      )

    // Twice the lane's room, from as many users: before, every one past SHORT_LANE_JOBS was refused at
    // once (and answered on the event loop); now each waits for room and is answered on the lane.
    const jobs = pool()
    const users = Array.from({ length: 2 * SHORT_LANE_JOBS }, (_, i) => `editor-${i}`)
    const many = await Promise.all(users.map((user) => jobs.syncAnswer(user, input())))
    expect(answers(many)).toEqual(users.map(() => 'answered'))
    for (const answer of many)
      if (answer.kind === 'ok' && !answer.value.stale)
        expect(answer.value.covered).toEqual(Y.encodeStateVector(doc))

    // One user's tabs: one running, MAX_WAITING_SYNC_ANSWERS_PER_USER waiting, the next refused at once.
    const tabs = await Promise.all(
      Array.from({ length: MAX_WAITING_SYNC_ANSWERS_PER_USER + 2 }, () =>
        jobs.syncAnswer('many-tabs', input()),
      ),
    )
    expect(answers(tabs)).toEqual([
      ...Array(MAX_WAITING_SYNC_ANSWERS_PER_USER + 1).fill('answered'),
      'unavailable',
    ])

    // Past the wait: a lane that stays full longer refuses (the editor is then answered as before).
    const impatient = pool({ admitWaitMs: 1 })
    const rushed = await Promise.all(users.map((user) => impatient.syncAnswer(user, input())))
    expect(answers(rushed).slice(0, SHORT_LANE_JOBS)).toEqual(Array(SHORT_LANE_JOBS).fill('answered'))
    expect(answers(rushed).slice(SHORT_LANE_JOBS)).toEqual(Array(SHORT_LANE_JOBS).fill('unavailable'))
  }, 60_000)

  test('closing refuses what is waiting and running', async () => {
    const jobs = pool()
    const running = imported(jobs, 'ann', manual(2 << 20), 'A')
    const waiting = imported(jobs, 'bea', '# B\n\nb', 'B')
    jobs.close()
    expect(await running).toMatchObject({ kind: 'error', code: 'unavailable' })
    expect(await waiting).toMatchObject({ kind: 'error', code: 'unavailable' })
    expect(await imported(jobs, 'cem', '# C', 'C')).toMatchObject({
      kind: 'error',
      code: 'unavailable',
    })
  }, 60_000)

  test("a job's bytes are posted as transfers, copies where the caller keeps reading its own", () => {
    const live = new Uint8Array([1, 2, 3, 4])
    const view = new Uint8Array(new ArrayBuffer(16), 4, 4).fill(9)
    const job = {
      id: 1,
      kind: 'undo' as const,
      input: {
        base: 'AQID',
        steps: [{ state: view, tracked: true }],
        live,
        checkConflicts: true,
        field: 'f',
      },
    }
    const posted = transferable(job, false)
    if (posted.job.kind !== 'undo') throw new Error('kind changed')
    const postedLive = posted.job.input.live
    const postedStep = posted.job.input.steps[0]!.state as Uint8Array
    // Every array the worker gets is in the transfer list (none left to the structured clone's copy)…
    expect(posted.transfer).toHaveLength(2)
    expect(posted.transfer).toContain(postedLive.buffer as ArrayBuffer)
    expect(posted.transfer).toContain(postedStep.buffer as ArrayBuffer)
    // …and is a copy: the caller's arrays stay readable after the transfer detaches the copies.
    expect(postedLive).not.toBe(live)
    expect([...postedStep]).toEqual([9, 9, 9, 9])
    structuredClone(posted.job, { transfer: posted.transfer })
    expect([...live]).toEqual([1, 2, 3, 4])
    expect([...view]).toEqual([9, 9, 9, 9])
    expect(job.input.base).toBe('AQID')
    // An export's arrays are the job's alone: those owning their buffer whole go as they are.
    const snapshot = new Uint8Array([5, 6])
    const exported = transferable({ id: 2, kind: 'export', stored: { snapshot, updates: [] } }, true)
    expect(exported.transfer).toEqual([snapshot.buffer as ArrayBuffer])
  })
})
