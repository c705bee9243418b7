/**
 * The live documents' copies on the documents' worker (documents/worker/read.ts renderLivePrefix, and the
 * event loop's side, live-copies.ts), run here on this thread: a copy is brought up to date by changes
 * alone; a copy the worker lost (ended, evicted) or one behind what the changes were encoded against is
 * `stale`, and the event loop then sends the whole state, once; the copies held stay within
 * MAX_LIVE_COPIES; a document's copy is dropped on the worker at the next read after the document is
 * destroyed (unloaded). The whole pool's worker runs them in whole-read-live-copy.test.ts. And on the
 * real pool: a whole read goes before the server's compactions waiting in the worker's queue (on the old
 * code it waited behind them: fails).
 */
import { describe, expect, test } from 'bun:test'
import { documentMarkdownPrefix, FRAGMENT_NAME, ok } from '@collab/doc-schema'
import * as Y from 'yjs'
import { LiveCopies } from '../documents/worker/live-copies.ts'
import { WorkerPool } from '../documents/worker/pool.ts'
import { liveCopiesHeld, renderLivePrefix } from '../documents/worker/read.ts'
import { MAX_LIVE_COPIES } from '../limits.ts'

const OPTS = { media: 'placeholder', suggestions: 'show' } as const

function docWith(words: string): Y.Doc {
  const doc = new Y.Doc()
  const paragraph = new Y.XmlElement('paragraph')
  const text = new Y.XmlText()
  paragraph.insert(0, [text])
  doc.getXmlFragment(FRAGMENT_NAME).push([paragraph])
  text.insert(0, words, { bold: {} })
  return doc
}

const textOf = (doc: Y.Doc) => (doc.getXmlFragment(FRAGMENT_NAME).get(0) as Y.XmlElement).get(0) as Y.XmlText
const renderedHere = (doc: Y.Doc) =>
  documentMarkdownPrefix(doc.getXmlFragment(FRAGMENT_NAME), 10_000, OPTS, true).text

describe("live documents' copies on the documents' worker", () => {
  test('changes only after the first read; a lost copy is stale and the whole state goes once', async () => {
    const copies = new LiveCopies()
    const asked: Array<{ whole: boolean; stale: boolean }> = []
    let lose = false
    const run = async (input: Parameters<typeof renderLivePrefix>[0]) => {
      if (lose) {
        // As when the worker ended or evicted it: the copy is gone (this call drops it, and finds it stale).
        expect(renderLivePrefix({ ...input, drop: [input.key] }).stale).toBe(true)
        lose = false
      }
      const reply = renderLivePrefix(input)
      asked.push({ whole: input.base === null, stale: Boolean(reply.stale) })
      return ok(reply)
    }
    const doc = docWith('hello')
    const read = async () => {
      const result = await copies.readPrefix(doc, 10_000, OPTS, run)
      if (result.kind !== 'ok') throw new Error(result.message)
      return result.value.text
    }
    expect(await read()).toBe(renderedHere(doc))
    textOf(doc).insert(0, 'more ')
    expect(await read()).toBe(renderedHere(doc))
    textOf(doc).delete(0, 3)
    expect(await read()).toBe(renderedHere(doc))
    expect(asked).toEqual([
      { whole: true, stale: false },
      { whole: false, stale: false },
      { whole: false, stale: false },
    ])
    expect(copies.sent.changes).toBeGreaterThan(0)
    lose = true
    textOf(doc).insert(0, 'again ')
    expect(await read()).toBe(renderedHere(doc))
    expect(asked.slice(3)).toEqual([
      { whole: false, stale: true },
      { whole: true, stale: false },
    ])
  })

  test('the copies held stay within MAX_LIVE_COPIES; a destroyed document’s copy is dropped at the next read', async () => {
    const copies = new LiveCopies()
    const run = async (input: Parameters<typeof renderLivePrefix>[0]) => ok(renderLivePrefix(input))
    const docs = Array.from({ length: MAX_LIVE_COPIES + 3 }, (_, i) => docWith(`doc ${i}`))
    for (const doc of docs) expect((await copies.readPrefix(doc, 10_000, OPTS, run)).kind).toBe('ok')
    expect(liveCopiesHeld().copies).toBe(MAX_LIVE_COPIES)
    const last = docs.at(-1)!
    const before = liveCopiesHeld().copies
    docs.at(-2)!.destroy()
    textOf(last).insert(0, 'x')
    expect((await copies.readPrefix(last, 10_000, OPTS, run)).kind).toBe('ok')
    expect(liveCopiesHeld().copies).toBe(before - 1)
  })
})

test("a whole read waiting in the worker's queue goes before the server's compactions", async () => {
  const jobs = new WorkerPool()
  try {
    const doc = docWith('word '.repeat(20_000))
    const state = Y.encodeStateAsUpdate(doc)
    const compactInput = {
      snapshot: null,
      updates: [Buffer.from(state).toString('base64')],
      storedOutline: null,
      maxTextChars: 0,
    }
    const order: string[] = []
    // The first compaction runs at once; the second waits, and the read asked after it.
    const first = jobs.compact('doc-1', compactInput).then(() => order.push('compact 1'))
    const second = jobs.compact('doc-2', compactInput).then(() => order.push('compact 2'))
    const read = jobs
      .readPrefix('bea', { stored: { snapshot: state, updates: [] }, minChars: 100, opts: OPTS })
      .then((result) => order.push(`read ${result.kind}`))
    await Promise.all([first, second, read])
    expect(order).toEqual(['compact 1', 'read ok', 'compact 2'])
  } finally {
    jobs.close()
  }
}, 60_000)
