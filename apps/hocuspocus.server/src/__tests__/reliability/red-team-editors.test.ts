/**
 * Editor updates that are cheap to send and dear to apply (issue 24), on the real server process with real
 * providers. Before: one 7.2 MB update holding a flat list of 100,000 items (under the 8 MiB message limit)
 * was accepted, its check took 5.9 s and its apply 3.0 s on the event loop, and other documents stalled
 * 9-12 s. Now the structs an update inserts and deletes are counted before it is decoded
 * (MAX_EDITOR_UPDATE_STRUCTS) and paced per connection (EDITOR_STRUCTS_PER_SECOND). Asserted: the refusal
 * and its reason, that nobody sees refused content, /health answering throughout, memory bounded; the stall
 * others felt is reported (`bun run reliability`).
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { FRAGMENT_NAME, MAX_EDITOR_UPDATE_STRUCTS } from '@collab/doc-schema'
import { DATABASE_KIND } from '@collab/test-support/database'
import { element, paragraph } from '@collab/test-support/documents'
import { connectProvider, type TestProvider } from '@collab/test-support/provider'
import { eventually } from '@collab/test-support/server'
import * as Y from 'yjs'
import { FloodBuckets } from '../../collab/boundary.ts'
import { EDITOR_STRUCT_BURST, EDITOR_STRUCTS_PER_SECOND } from '../../collab/limits.ts'
import { newRoom, startProbe, useMeasuredServer } from './red-team-support.ts'
import { reportFigure } from './support.ts'

const MAX_RSS_GROWTH_BYTES = 200 * 1024 * 1024

/** A bullet list of `items` one-letter items: per item a list item, a paragraph, a text and its string. */
function list(items: number): Y.XmlElement {
  return element(
    'bulletList',
    {},
    Array.from({ length: items }, () => element('listItem', {}, [paragraph('x')])),
  )
}

describe('flood control counts structs', () => {
  test(`past the burst, each ${EDITOR_STRUCTS_PER_SECOND} structs cost a connection one second of waiting`, () => {
    const buckets = new FloodBuckets()
    expect(buckets.draw(100, EDITOR_STRUCT_BURST)).toBe(0)
    const wait = buckets.draw(100, EDITOR_STRUCTS_PER_SECOND)
    expect(wait).toBeGreaterThan(900)
    expect(wait).toBeLessThanOrEqual(1_000)
  })
})

describe(`red team: editor updates dear to apply (${DATABASE_KIND})`, () => {
  const target = useMeasuredServer()
  const providers: TestProvider[] = []
  afterAll(() => {
    for (const p of providers) p.destroy()
  })

  const roomNamed = (title: string) => newRoom(target.server.url, target.token, title)

  async function open(room: string) {
    const p = connectProvider(target.server.url, room, target.token)
    providers.push(p)
    const closes: Array<{ code: number; reason: string }> = []
    p.provider.on('close', ({ event }: { event: { code: number; reason: string } }) =>
      closes.push({ code: event.code, reason: event.reason }),
    )
    await p.ready
    return { ...p, closes, fragment: p.doc.getXmlFragment(FRAGMENT_NAME) }
  }

  const lists = (doc: Y.Doc) =>
    doc
      .getXmlFragment(FRAGMENT_NAME)
      .toArray()
      .filter((node) => node instanceof Y.XmlElement && node.nodeName === 'bulletList') as Y.XmlElement[]

  test('one update of a 100,000-item list is refused before it is decoded; nobody sees it', async () => {
    const room = await roomNamed('List bomb')
    const attacker = await open(room)
    const observer = await open(room)
    const probe = await startProbe(target.server.url, target.server.proc.pid)
    attacker.doc.transact(() => attacker.fragment.push([list(100_000)]))
    await eventually(() => expect(attacker.closes.length).toBeGreaterThan(0), 30_000, 'the refusal')
    // What the observer holds is what the server applied: no list. The server answers one socket's
    // messages in order, so once an edit the observer makes now is acknowledged, a broadcast of the list
    // (had the server applied it) would have reached the observer before that acknowledgement.
    observer.doc.transact(() => observer.fragment.push([paragraph('after the attack')]))
    await eventually(() => expect(observer.provider.unsyncedChanges).toBe(0), 10_000, "the observer's edit")
    const seen = await probe.stop()
    expect(attacker.closes[0]?.reason).toContain(
      `more than ${MAX_EDITOR_UPDATE_STRUCTS.toLocaleString('en-US')} items at once`,
    )
    expect(lists(observer.doc)).toHaveLength(0)
    expect(seen.statuses).toEqual([200])
    expect(seen.rssGrowth).toBeLessThan(MAX_RSS_GROWTH_BYTES)
    reportFigure('red-team-editors', {
      attack: 'list of 100,000 items in one update',
      healthP99Ms: seen.p99Ms,
      growthMiB: seen.rssGrowth >> 20,
    })
  }, 60_000)

  test('a paste just under the ceiling is applied; a deletion past it is refused, in parts it goes through', async () => {
    const room = await roomNamed('Big paste')
    const editor = await open(room)
    const observer = await open(room)
    // 2,400 items: 9,601 structs, under the ceiling.
    editor.doc.transact(() => editor.fragment.push([list(2_400)]))
    await eventually(() => expect(lists(observer.doc)[0]?.length).toBe(2_400), 30_000, 'the paste')
    for (let i = 0; i < 2; i++) editor.doc.transact(() => editor.fragment.push([list(2_400)]))
    await eventually(() => expect(lists(observer.doc)).toHaveLength(3), 30_000, 'two more pastes')
    expect(editor.closes).toEqual([])

    // Deleting all three lists at once reaches 28,803 structs: cost 14,401 > 10,000.
    const deleter = await open(room)
    deleter.doc.transact(() => deleter.fragment.delete(2, 3))
    await eventually(() => expect(deleter.closes.length).toBeGreaterThan(0), 30_000, 'the refusal')
    expect(deleter.closes[0]?.reason).toContain('paste or delete in smaller parts')
    expect(lists(observer.doc)).toHaveLength(3)
    // One list at a time is 9,601 structs, cost 4,800: applied.
    for (let i = 0; i < 3; i++) editor.doc.transact(() => editor.fragment.delete(2, 1))
    await eventually(() => expect(lists(observer.doc)).toHaveLength(0), 30_000, 'the deletions')
    expect(editor.closes).toEqual([])
  }, 90_000)
})
