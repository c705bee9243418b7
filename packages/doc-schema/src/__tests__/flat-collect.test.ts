/**
 * yjs/flat-collect.ts: a state read flat and written back collected is what Yjs encodes after applying the
 * same bytes to an empty document (gc on), byte for byte, with the same state vector.
 */
import { describe, expect, test } from 'bun:test'
import * as Y from 'yjs'
import { FRAGMENT_NAME } from '../limits.ts'
import { readFlat } from '../yjs/flat-read.ts'
import { concurrentEdits, expectCollectedAsYjs } from './flat-read-support.ts'

describe('readFlat with collect', () => {
  test("writes Yjs's collected state for concurrent histories, integrated and as a log", () => {
    for (let seed = 1; seed <= 40; seed++) {
      const { docs, updates } = concurrentEdits(seed, 3 + (seed % 3), 25)
      expectCollectedAsYjs(Y.encodeStateAsUpdate(docs[0]!))
      // Never integrated: every update merged as made, deleted content still in it, items never joined.
      expectCollectedAsYjs(Y.mergeUpdates(updates))
      // A snapshot of the first half, then the rest as log rows merged after it.
      const half = Math.floor(updates.length / 2)
      expectCollectedAsYjs(Y.mergeUpdates([Y.mergeUpdates(updates.slice(0, half)), ...updates.slice(half)]))
    }
  })

  test('collects the deleted content that documents with gc off kept', () => {
    for (let seed = 100; seed <= 115; seed++) {
      const { docs } = concurrentEdits(seed, 3, 20, false)
      for (const doc of docs) expectCollectedAsYjs(Y.encodeStateAsUpdate(doc))
    }
  })

  test('a string cut inside an emoji, then partly deleted, keeps the replacement characters Yjs writes', () => {
    const a = new Y.Doc({ gc: false })
    a.clientID = 5
    const text = new Y.XmlText('x😀😀y and more')
    const p = new Y.XmlElement('paragraph')
    p.insert(0, [text])
    a.getXmlFragment(FRAGMENT_NAME).insert(0, [p])
    const b = new Y.Doc({ gc: false })
    b.clientID = 3
    Y.applyUpdate(b, Y.encodeStateAsUpdate(a))
    ;((b.getXmlFragment(FRAGMENT_NAME).get(0) as Y.XmlElement).get(0) as Y.XmlText).insert(2, 'Q')
    text.insert(4, 'R', { bold: true })
    text.delete(8, 3)
    Y.applyUpdate(a, Y.encodeStateAsUpdate(b))
    expectCollectedAsYjs(Y.encodeStateAsUpdate(a))
  })

  test('a deleted element collects everything under it; a map key keeps only its last entry', () => {
    const doc = new Y.Doc({ gc: false })
    doc.clientID = 9
    const fragment = doc.getXmlFragment(FRAGMENT_NAME)
    const quote = new Y.XmlElement('blockquote')
    const inner = new Y.XmlElement('paragraph')
    inner.insert(0, [new Y.XmlText('deep text')])
    quote.insert(0, [inner])
    const kept = new Y.XmlElement('paragraph')
    kept.insert(0, [new Y.XmlText('stays')])
    fragment.insert(0, [quote, kept])
    for (const value of ['1', '2', '3']) kept.setAttribute('id', value)
    doc.getMap('meta').set('k', 1)
    doc.getMap('meta').set('k', [1, 2, { x: 'y' }])
    fragment.delete(0, 1)
    const state = Y.encodeStateAsUpdate(doc)
    expectCollectedAsYjs(state)
    // The deleted quote's content is gone from the collected state.
    const collected = readFlat(state, FRAGMENT_NAME, { collect: true })!.collected!.state
    expect(Buffer.from(state).includes('deep text')).toBe(true)
    expect(Buffer.from(collected).includes('deep text')).toBe(false)
  })

  test('lists of values cut by references are written in their pieces', () => {
    const a = new Y.Doc()
    a.clientID = 2
    const array = a.getArray<unknown>('list')
    array.insert(0, [1, 'two', { three: 3 }, [4], null, 6.5])
    const b = new Y.Doc()
    b.clientID = 1
    Y.applyUpdate(b, Y.encodeStateAsUpdate(a))
    b.getArray<unknown>('list').insert(3, ['between'])
    array.delete(1, 1)
    Y.applyUpdate(a, Y.encodeStateAsUpdate(b))
    Y.applyUpdate(b, Y.encodeStateAsUpdate(a))
    expectCollectedAsYjs(Y.encodeStateAsUpdate(a))
    expectCollectedAsYjs(Y.mergeUpdates([Y.encodeStateAsUpdate(b), Y.encodeStateAsUpdate(a)]))
  })

  test("text typed on after another client's insert is not joined to the text before it (a new right origin)", () => {
    const a = new Y.Doc()
    a.clientID = 8
    const b = new Y.Doc()
    b.clientID = 2
    a.getText('t').insert(0, 'a')
    Y.applyUpdate(b, Y.encodeStateAsUpdate(a))
    b.getText('t').insert(1, 'Y')
    Y.applyUpdate(a, Y.encodeStateAsUpdate(b))
    // Client 8's next clock, right after its "a", now with Y as its right origin.
    a.getText('t').insert(1, 'b')
    Y.applyUpdate(b, Y.encodeStateAsUpdate(a))
    expect(a.getText('t').toString()).toBe('abY')
    expectCollectedAsYjs(Y.encodeStateAsUpdate(b))
  })

  test('gives up where Yjs would keep something pending: a deletion of what the update does not hold', () => {
    const doc = new Y.Doc()
    doc.clientID = 4
    doc.getText('t').insert(0, 'abc')
    const state = Y.encodeStateAsUpdate(doc)
    // The same structs with a delete set naming clocks 2-9 of client 4 (only 0-2 exist).
    const withDeletion = Y.mergeUpdates([
      state,
      Uint8Array.from([0, 1, 4, 1, 2, 8]), // no structs; one client (4) with one range (2, 8)
    ])
    expect(readFlat(withDeletion, FRAGMENT_NAME, { collect: true })).toBeNull()
    expect(readFlat(state, FRAGMENT_NAME, { collect: true })?.collected).toBeDefined()
  })
})
