/**
 * Stores that content cannot break. Found by hand: one NUL typed into a heading made every later store of
 * the document fail (PostgreSQL 22P05: the stored outline is JSON built from heading titles), and a
 * blockquote nested 50,000 deep did the same through a stack overflow in blockPlainText. Reads kept
 * working; the owner typed 20 acknowledged paragraphs and after a restart 0 of 20 were there; the store
 * was retried forever and SIGTERM waited ~20 s and exited 1.
 *
 * Each test: a real server on a real database, a real provider typing, then `stop()` (the shutdown path)
 * and a new server on the same database, which must hold every acknowledged paragraph. With
 * TEST_REDIS_URL and TEST_DATABASE_URL, the NUL also travels between two instances through Redis.
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { FRAGMENT_NAME, readPlainText } from '@collab/doc-schema'
import { DATABASE_KIND } from '@collab/test-support/database'
import { paragraph, storedText } from '@collab/test-support/documents'
import { connectProvider, type TestProvider } from '@collab/test-support/provider'
import {
  editorsOnBoth,
  eventually,
  readAfterBothStop,
  startTestServer,
  TWO_INSTANCES,
  useRestartableServer,
  useTwoTestServers,
} from '@collab/test-support/server'
import pino from 'pino'
import * as Y from 'yjs'
import { STORE_FAULT_MAX_RETRIES } from '../../collab/persistence/retry.ts'
import type { Config } from '../../config.ts'
import { storableJSON } from '../../db/storable-text.ts'
import type { Logger } from '../../logger.ts'
import { firstRunToken, readStored, spawnOn, useProcessRun } from './faults-support.ts'

/** Paragraphs the owner types after the hostile content, each acknowledged by the server. */
const PARAGRAPHS = 20
/** Nesting of the blockquote from the report (reads failed from 10,000, stores at 50,000). */
const DEEP = 50_000

/** Types the 20 paragraphs, one transaction each, and waits until the server acknowledged them all. */
async function typeParagraphs(editor: TestProvider, label: string): Promise<void> {
  const fragment = editor.doc.getXmlFragment(FRAGMENT_NAME)
  for (let i = 0; i < PARAGRAPHS; i++) fragment.push([paragraph(`${label} paragraph ${i}`)])
  await eventually(() => expect(editor.provider.unsyncedChanges).toBe(0), 20_000, 'acknowledgements')
}

function expectAllParagraphs(text: string, label: string): void {
  const missing = Array.from({ length: PARAGRAPHS }, (_, i) => `${label} paragraph ${i}`).filter(
    (line) => !text.includes(line),
  )
  expect(missing).toEqual([])
}

describe(`stores that content cannot break (${DATABASE_KIND})`, () => {
  const s = useRestartableServer('owner')
  const connect = (room: string) => s.connect(room)
  const restart = (overrides: Partial<Config> = {}, logger?: Logger) => s.restart(overrides, logger)

  async function createDocument(title: string): Promise<{ id: string; room: string }> {
    const created = await s.server.services.documents.create(s.owner.user.id, { title })
    if (created.kind === 'error') throw new Error(created.message)
    return created.value
  }

  test('a NUL and a lone surrogate in the title, a heading id and a paragraph: 20 later paragraphs survive a restart', async () => {
    const { id, room } = await createDocument('Poisoned title')
    const editor = await connect(room)
    const fragment = editor.doc.getXmlFragment(FRAGMENT_NAME)
    editor.doc.transact(() => {
      // Into the title (the first heading), typed as an editor types.
      ;((fragment.get(0) as Y.XmlElement).get(0) as Y.XmlText).insert(3, 'nul\u0000 lone\ud800 ')
      const heading = new Y.XmlElement('heading')
      heading.setAttribute('level', 2 as unknown as string)
      heading.setAttribute('toc-id', 'bad\u0000id\udc00')
      heading.insert(0, [new Y.XmlText('Second\u0000 heading \udc00')])
      fragment.push([heading, paragraph('a paragraph with a \u0000 and a \ud800')])
    })
    await typeParagraphs(editor, 'nul')
    await eventually(() => expect(s.server.collab.persistence.pendingCount()).toBe(0), 20_000, 'stored')
    expect(s.server.collab.persistence.faultsByRoom().size).toBe(0) // stored whole, not as the state alone
    // The last editor leaving unloads the document, which merges its update log into the snapshot with
    // the title, search text and outline derived from the content.
    s.closeEditors()
    await eventually(
      () => expect(s.server.collab.hocuspocus.documents.has(room)).toBe(false),
      20_000,
      'unload',
    )
    expect(s.server.collab.persistence.faultsByRoom().size).toBe(0)

    const { unstored } = await restart()
    expect(unstored).toEqual([])
    const text = await storedText(s.server, room)
    expectAllParagraphs(text, 'nul')
    const row = await s.server.services.db.prisma.document.findUniqueOrThrow({ where: { id } })
    expect(row.title).toContain('lone')
    expect(row.title).not.toContain('\u0000')
    const outline = await s.server.services.documents.loadOutline(room)
    expect(outline?.outline?.map((node) => node.title)).toEqual([row.title])
    expect(JSON.stringify(outline)).not.toContain('\\u0000')
  }, 60_000)

  test('JSON built from content with a NUL or a lone surrogate anywhere is stored as jsonb', async () => {
    // Lone surrogates cannot cross a provider's wire (UTF-8), but MCP and direct writes reach the store.
    const { id, room } = await createDocument('Direct JSON')
    const loaded = await s.server.services.documents.loadState(room)
    const title = 'Title \ud800 with \u0000 and \udfff'
    const outline = [
      {
        sectionId: 'id\u0000\ud800',
        level: 1,
        title,
        rev: 'rev\udc00',
        size: 40,
        children: [{ sectionId: 'child', level: 2, title: '\u0000', rev: 'r', size: 1, children: [] }],
      },
    ]
    expect(storableJSON(outline)).not.toMatch(/\\u(0000|d[89a-f])/i)
    await s.server.services.documents.storeState(id, { state: loaded!.state!, title, text: title, outline })
    const stored = await s.server.services.documents.loadOutline(room)
    expect(stored?.outline?.[0]?.title).toBe('Title \ufffd with  and \ufffd')
    expect(stored?.outline?.[0]?.sectionId).not.toContain('\u0000') // and '' unless well-formed
    expect(stored?.outline?.[0]?.children[0]?.title).toBe('')
  }, 60_000)

  test('names and labels written from input: a NUL or lone surrogate is stored clean or refused as not found', async () => {
    const principal = await s.server.services.tokens.verify(s.owner.token)
    for (const room of ['room\u0000name', 'room\ud800name']) {
      const resolved = await s.server.services.documents.resolveRoom(room, principal!)
      expect(resolved.kind === 'error' && resolved.code).toBe('not_found')
    }
    const issued = await s.server.services.tokens.issue(s.owner.user.id, {
      scopes: ['read'],
      label: 'la\u0000bel\ud800',
    })
    expect(issued.kind === 'ok' && issued.value.record.label).toBe('label\ufffd')
    const user = await s.server.services.users.add('named', 'Na\u0000me \udc00')
    expect(user.kind === 'ok' && user.value.name).toBe('Name \ufffd')
  }, 60_000)

  test(`a blockquote nested ${DEEP.toLocaleString('en')} deep: 20 later paragraphs survive a restart`, async () => {
    const { room } = await createDocument('Deep quote')
    const editor = await connect(room)
    // Written in the server's own document (the editor boundary refuses this depth from a provider):
    // the store must survive whatever reaches the document, whichever way it came.
    const direct = await s.server.collab.hocuspocus.openDirectConnection(room, {})
    await direct.transact((doc) => {
      let parent: Y.XmlFragment | Y.XmlElement = doc.getXmlFragment(FRAGMENT_NAME)
      for (let level = 0; level < DEEP; level++) {
        const quote = new Y.XmlElement('blockquote')
        parent.insert(parent.length, [quote])
        parent = quote
      }
      parent.insert(0, [paragraph('at the bottom of the quote')])
    })
    await direct.disconnect()
    await eventually(
      () => expect(readPlainText(editor.doc.getXmlFragment(FRAGMENT_NAME))).toContain('at the bottom'),
      20_000,
      'the deep quote reaching the editor',
    )
    await typeParagraphs(editor, 'deep')
    await eventually(() => expect(s.server.collab.persistence.pendingCount()).toBe(0), 20_000, 'stored')
    expect(s.server.collab.persistence.faultsByRoom().size).toBe(0)

    const { unstored } = await restart()
    expect(unstored).toEqual([])
    const text = await storedText(s.server, room)
    expect(text).toContain('at the bottom of the quote')
    expectAllParagraphs(text, 'deep')
  }, 60_000)

  test('a full store the database refuses is reported, and the state is stored alone', async () => {
    const lines: string[] = []
    await restart({}, pino({ level: 'info', base: undefined }, { write: (line: string) => lines.push(line) }))
    const { id, room } = await createDocument('Refused title')
    // A real refusal from the real database, for content this server cannot store: the title.
    await s.server.services.db.prisma.$executeRawUnsafe(
      `ALTER TABLE documents ADD CONSTRAINT refuse_title CHECK (title NOT LIKE '%unstorable%') NOT VALID`,
    )
    try {
      const editor = await connect(room)
      const fragment = editor.doc.getXmlFragment(FRAGMENT_NAME)
      ;((fragment.get(0) as Y.XmlElement).get(0) as Y.XmlText).insert(0, 'unstorable ')
      const faultsBefore = s.server.metrics.storeFaults.get()
      await typeParagraphs(editor, 'refused')
      await eventually(() => expect(s.server.collab.persistence.pendingCount()).toBe(0), 20_000, 'stored')
      // The content is stored first; the title's refusal comes from the refresh that follows the store.
      await eventually(
        () => expect(s.server.metrics.storeFaults.get()).toBeGreaterThan(faultsBefore),
        20_000,
        'the refused title reported',
      )
      expect(s.server.collab.persistence.faultsByRoom().get(room)?.code).toBe('23514')
      // Logged once, at error level, with the document and the reason, and without the document's text.
      const reported = lines.map((line) => JSON.parse(line)).filter((line) => line.documentId === id)
      expect(reported.filter((line) => line.level >= 50 && line.code === '23514')).toHaveLength(1)
      expect(reported[0]?.reason).toContain('refuse_title')
      expect(lines.join('\n')).not.toContain('unstorable')
      expect(lines.join('\n')).not.toContain('refused paragraph')

      const { unstored } = await restart()
      expect(unstored).toEqual([])
      expectAllParagraphs(await storedText(s.server, room), 'refused')
      // Title and search text stay as last stored; the outline is left for reads to derive.
      const row = await s.server.services.db.prisma.document.findUniqueOrThrow({ where: { id } })
      expect(row.title).toBe('Refused title')
      expect((await s.server.services.documents.loadOutline(room))?.outline).toBeNull()
    } finally {
      await s.server.services.db.prisma.$executeRawUnsafe(
        'ALTER TABLE documents DROP CONSTRAINT refuse_title',
      )
    }
  }, 60_000)

  test('a document that cannot be stored at all is retried a few times, then waits; shutdown lists it at once and stores the others', async () => {
    // A shutdown deadline far past this test's timeout: stop() must not spend it on the refused document.
    await restart({ shutdownTimeoutMs: 10 * 60_000 })
    const bad = await createDocument('Cannot be stored')
    const good = await createDocument('Stored fine')
    // Neither the whole store nor the state alone: the update-log row and the state row are refused.
    for (const table of ['document_updates', 'document_states'])
      await s.server.services.db.prisma.$executeRawUnsafe(
        `ALTER TABLE ${table} ADD CONSTRAINT refuse_one CHECK (document_id <> '${bad.id}'::uuid) NOT VALID`,
      )
    try {
      const onBad = await connect(bad.room)
      const onGood = await connect(good.room)
      const faultsBefore = s.server.metrics.storeFaults.get()
      onBad.doc.getXmlFragment(FRAGMENT_NAME).push([paragraph('never stored')])
      await eventually(
        () => expect(s.server.collab.persistence.faultsByRoom().get(bad.room)?.stalled).toBe(true),
        30_000,
        'retries to stop',
      )
      const faults = s.server.metrics.storeFaults.get()
      // The first store and its retries (Hocuspocus may add a store of its own per change).
      expect(faults - faultsBefore).toBeLessThanOrEqual(2 * (1 + STORE_FAULT_MAX_RETRIES))
      await typeParagraphs(onGood, 'other document')
      await eventually(() => expect(s.server.collab.persistence.pendingCount()).toBe(1), 20_000, 'stored')
      // No retry of the stalled document while nothing changes in it (longer than the first backoffs).
      await Bun.sleep(2_000)
      expect(s.server.metrics.storeFaults.get()).toBe(faults)
      expect(s.server.collab.hocuspocus.documents.has(bad.room)).toBe(true) // kept in memory

      const { unstored } = await restart()
      expect(unstored).toEqual([bad.room])
      expectAllParagraphs(await storedText(s.server, good.room), 'other document')
    } finally {
      for (const table of ['document_updates', 'document_states'])
        await s.server.services.db.prisma.$executeRawUnsafe(`ALTER TABLE ${table} DROP CONSTRAINT refuse_one`)
    }
  }, 60_000)
})

describe.skipIf(!TWO_INSTANCES)('a NUL travelling between two instances through Redis (postgres)', () => {
  const editors: TestProvider[] = []
  afterAll(() => {
    for (const editor of editors) editor.destroy()
  })
  const pair = useTwoTestServers()

  test('both instances keep storing: 20 paragraphs typed on B after a NUL typed on A survive', async () => {
    const { room, onA, onB } = await editorsOnBoth(pair.a, pair.b, 'owner', 'Spreading')
    editors.push(onA, onB)
    const title = (onA.doc.getXmlFragment(FRAGMENT_NAME).get(0) as Y.XmlElement).get(0) as Y.XmlText
    title.insert(0, 'nul\u0000 ')
    await eventually(
      () => expect(readPlainText(onB.doc.getXmlFragment(FRAGMENT_NAME))).toContain('nul\u0000'),
      20_000,
      'the NUL reaching B',
    )
    await typeParagraphs(onB, 'instance B')
    await eventually(() => expect(pair.b.collab.persistence.pendingCount()).toBe(0), 20_000, 'B stored')
    for (const editor of editors.splice(0)) editor.destroy()
    // Both instances unload the document (and compact it, writing the outline checked below) before they
    // stop: a stop flushes what is unstored but does not compact, and on a loaded machine the unload came
    // after the stop, leaving the outline of the creation behind the logged updates.
    await eventually(
      () =>
        expect([pair.a, pair.b].map((s) => s.collab.hocuspocus.documents.has(room))).toEqual([false, false]),
      20_000,
      'the document unloaded on both instances',
    )
    const { text, outline } = await readAfterBothStop(pair, async (reader) => ({
      text: await storedText(reader, room),
      outline: await reader.services.documents.loadOutline(room),
    }))
    // Every store on both was whole (title, search text, outline), none fell back to the state alone.
    expect(pair.a.metrics.storeFaults.get() + pair.b.metrics.storeFaults.get()).toBe(0)
    expectAllParagraphs(text, 'instance B')
    expect(outline?.outline?.[0]?.title).toBe('nul Spreading')
  }, 60_000)
})

describe(`SIGTERM after a NUL in the title, as found by hand (${DATABASE_KIND}, a real process)`, () => {
  const run = useProcessRun()

  test('exits 0, and all 20 acknowledged paragraphs are stored', async () => {
    run.server = await spawnOn(run.db)
    const token = firstRunToken(run.db.dataDir)
    const listed = (await (
      await fetch(`${run.server.url}/api/documents`, { headers: { Authorization: `Bearer ${token}` } })
    ).json()) as { documents: Array<{ room: string }> }
    const room = listed.documents[0]!.room
    const editor = connectProvider(run.server.url, room, token)
    run.editors.push(editor)
    await editor.ready
    const fragment = editor.doc.getXmlFragment(FRAGMENT_NAME)
    ;((fragment.get(0) as Y.XmlElement).get(0) as Y.XmlText).insert(0, 'nul\u0000 ')
    fragment.push([paragraph('private words \u0000 nobody logs')])
    await typeParagraphs(editor, 'owner')
    const running = run.server
    run.server = undefined
    running.proc.kill('SIGTERM')
    expect(await running.proc.exited).toBe(0)
    expect(running.stderr()).not.toContain('private words')

    const stored = await readStored(run.db, [room])
    expectAllParagraphs(stored.get(room)!.text, 'owner')
    // Stored whole: the title holds the typed title (without its NUL). Shutdown appends to the update
    // log and refreshes the title and search text; it compacts nothing, so no outline is stored.
    const reader = await startTestServer(run.db)
    try {
      const row = await reader.services.db.prisma.document.findUniqueOrThrow({ where: { room } })
      expect(row.title).toBe('nul Welcome')
    } finally {
      await reader.stop()
    }
  }, 60_000)
})
