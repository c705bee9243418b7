/**
 * yjs/flat-read.ts against Yjs over many more random concurrent documents than flat-read.test.ts (the slow
 * tier): more clients, longer histories, states and never-integrated logs, gc on and off; each compared
 * block by block, as a first screen and as bounded whole reads, and written back collected (flat-collect.ts).
 */
import { describe, expect, test } from 'bun:test'
import * as Y from 'yjs'
import { firstScreenHtml } from '../first-screen.ts'
import { FRAGMENT_NAME } from '../limits.ts'
import { documentMarkdownPrefix } from '../markdown/document-to-markdown.ts'
import { readFlat } from '../yjs/flat-read.ts'
import { concurrentEdits, expectCollectedAsYjs, expectSameBlocks } from './flat-read-support.ts'

describe('readFlat, random', () => {
  test('equals Yjs over 150 histories of 3 to 7 clients', () => {
    for (let seed = 1_000; seed < 1_150; seed++) {
      const { docs, updates } = concurrentEdits(seed, 3 + (seed % 5), 30 + (seed % 4) * 10, seed % 3 !== 0)
      const state = Y.encodeStateAsUpdate(docs[seed % docs.length]!)
      expectSameBlocks(state)
      expectSameBlocks(Y.mergeUpdates(updates))
      expectCollectedAsYjs(state)
      expectCollectedAsYjs(Y.mergeUpdates(updates))
      const flat = readFlat(state, FRAGMENT_NAME)!
      const doc = new Y.Doc()
      Y.applyUpdate(doc, state)
      const fragment = doc.getXmlFragment(FRAGMENT_NAME)
      const limits = { maxBlocks: 1 + (seed % 20), maxWork: 50 + (seed % 7) * 100 }
      expect(firstScreenHtml(flat, limits)).toEqual(firstScreenHtml(fragment, limits))
      for (const minChars of [seed % 97, 300 + (seed % 300)])
        expect(documentMarkdownPrefix(flat, minChars, { media: 'source' }, true)).toEqual(
          documentMarkdownPrefix(fragment, minChars, { media: 'source' }, true),
        )
      doc.destroy()
    }
  }, 300_000)
})
