/**
 * The search text's walk in steps (read-document.ts plainTextWalk), which the server spreads over turns
 * of its event loop: one step a block, the same text as readPlainText, and a block deleted between two
 * steps is skipped while the walk goes on from where it was.
 */
import { describe, expect, test } from 'bun:test'
import * as Y from 'yjs'
import { appendMarkdown, FRAGMENT_NAME, plainTextWalk, readPlainText } from '../index.ts'

function manual(): Y.XmlFragment {
  const doc = new Y.Doc()
  const fragment = doc.getXmlFragment(FRAGMENT_NAME)
  appendMarkdown(fragment, '# Title\n\nfirst\n\nsecond\n\n- a\n- b\n\nthird\n')
  return fragment
}

describe('the search text walked in steps', () => {
  test('one step a block, the same text as read at once, cut at maxChars as it is', () => {
    const fragment = manual()
    const walk = plainTextWalk(fragment)
    let steps = 0
    let step = walk.next()
    for (; !step.done; step = walk.next()) steps++
    expect(steps).toBe(fragment.length)
    expect(step.value).toBe(readPlainText(fragment))
    const cut = plainTextWalk(fragment, 10)
    let last = cut.next()
    while (!last.done) last = cut.next()
    expect(last.value).toBe(readPlainText(fragment, 10))
  })

  test('a block deleted between two steps is skipped, and the walk goes on', () => {
    const fragment = manual()
    const walk = plainTextWalk(fragment)
    walk.next() // the title read
    walk.next() // "first" read
    fragment.delete(2, 1) // "second", not read yet
    fragment.insert(fragment.length, [new Y.XmlElement('paragraph')])
    let step = walk.next()
    while (!step.done) step = walk.next()
    expect(step.value).toBe('Title\nfirst\na\nb\nthird')
  })
})
