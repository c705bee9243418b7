/**
 * The plain-text memo (yjs/plain-text-memo.ts): the same title and search text as readTitle and
 * readPlainText after every kind of change, local or applied from another replica (as the server gets its
 * editors' updates), while it reads again only the blocks a change landed under.
 */
import { describe, expect, test } from 'bun:test'
import * as Y from 'yjs'
import {
  appendMarkdown,
  createPlainTextMemo,
  FRAGMENT_NAME,
  type PlainTextMemo,
  plainTextBlocksRead,
  readPlainText,
  readTitle,
} from '../index.ts'
import { SUGGESTION_INSERT } from '../suggestion-marks.ts'
import { seededRandom } from './seeded-random.ts'

function walkAll(memo: PlainTextMemo, maxChars?: number): string {
  const walk = memo.walk(maxChars)
  for (;;) {
    const step = walk.next()
    if (step.done) return step.value
  }
}

function descendants(node: Y.XmlFragment | Y.XmlElement): Array<Y.XmlElement | Y.XmlText> {
  const out: Array<Y.XmlElement | Y.XmlText> = []
  for (const child of node.toArray()) {
    if (child instanceof Y.XmlText) out.push(child)
    else if (child instanceof Y.XmlElement) out.push(child, ...descendants(child))
  }
  return out
}

const paragraph = (text: string) => {
  const p = new Y.XmlElement('paragraph')
  p.insert(0, [new Y.XmlText(text)])
  return p
}

describe('the plain-text memo', () => {
  test('equals a full walk after random edits, local and remote, cut or whole', () => {
    // The server's copy (memo) and an editor's (where edits are made), kept in step by updates.
    const server = new Y.Doc()
    const editor = new Y.Doc()
    editor.on('update', (update: Uint8Array) => Y.applyUpdate(server, update))
    const source = editor.getXmlFragment(FRAGMENT_NAME)
    appendMarkdown(
      source,
      '# Title\n\nalpha beta\n\n- one\n- two\n  - three\n\n> quoted **bold**\n\n![alt text](https://x.test/a.png)\n\n' +
        'gamma\n\n## Second\n\ndelta epsilon\n',
    )
    const fragment = server.getXmlFragment(FRAGMENT_NAME)
    const memo = createPlainTextMemo(fragment)
    const random = seededRandom(7)
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!
    const words = ['ant ', 'bee', ' cat', 'dog', '\u00e9l\u00e8ve', 'x']
    for (let round = 0; round < 400; round++) {
      // Read now and then (kept texts between edits), and not in every round (several edits per read).
      if (random() < 0.5) {
        expect(memo.title()).toBe(readTitle(fragment))
        expect(walkAll(memo)).toBe(readPlainText(fragment))
        expect(walkAll(memo, 40)).toBe(readPlainText(fragment, 40))
      }
      editor.transact(() => {
        const nodes = descendants(source)
        const texts = nodes.filter((n): n is Y.XmlText => n instanceof Y.XmlText)
        const roll = random()
        if (roll < 0.25 && texts.length > 0) {
          const text = pick(texts)
          text.insert(Math.floor(random() * (text.length + 1)), pick(words))
        } else if (roll < 0.4 && texts.length > 0) {
          const text = pick(texts)
          const at = Math.floor(random() * text.length)
          text.delete(at, Math.min(text.length - at, 3))
        } else if (roll < 0.5 && texts.length > 0) {
          // A proposed insertion leaves the accepted text: a format changes what is read.
          const text = pick(texts)
          const at = Math.floor(random() * text.length)
          const mark = random() < 0.5 ? { [SUGGESTION_INSERT]: { id: 's1' } } : { [SUGGESTION_INSERT]: null }
          text.format(at, Math.min(text.length - at, 5), mark)
        } else if (roll < 0.6) {
          source.insert(Math.floor(random() * (source.length + 1)), [paragraph(pick(words))])
        } else if (roll < 0.7 && source.length > 3) {
          source.delete(Math.floor(random() * source.length), 1)
        } else if (roll < 0.8) {
          const images = nodes.filter((n) => n instanceof Y.XmlElement && n.nodeName === 'image')
          if (images.length > 0) (pick(images) as Y.XmlElement).setAttribute('alt', pick(words))
          else source.insert(source.length, [new Y.XmlElement('image')])
        } else if (roll < 0.9) {
          const items = nodes.filter((n) => n instanceof Y.XmlElement && n.nodeName === 'listItem')
          if (items.length > 0) (pick(items) as Y.XmlElement).push([paragraph(pick(words))])
        } else {
          // A heading first: the title moves.
          const heading = new Y.XmlElement('heading')
          heading.setAttribute('level', '1')
          heading.insert(0, [new Y.XmlText(pick(words))])
          source.insert(Math.floor(random() * 2), [heading])
        }
      })
    }
    expect(memo.title()).toBe(readTitle(fragment))
    expect(walkAll(memo)).toBe(readPlainText(fragment))
    memo.destroy()
  })

  test('reads again only the block a change landed under; a walk in steps sees changes between them', () => {
    const doc = new Y.Doc()
    const fragment = doc.getXmlFragment(FRAGMENT_NAME)
    appendMarkdown(
      fragment,
      `# Title\n\n${Array.from({ length: 50 }, (_, i) => `block ${i}`).join('\n\n')}\n`,
    )
    const memo = createPlainTextMemo(fragment)
    let before = plainTextBlocksRead()
    expect(walkAll(memo)).toBe(readPlainText(fragment))
    expect(memo.title()).toBe('Title')
    expect(plainTextBlocksRead() - before).toBe(51 + 51) // the memo's first walk, then readPlainText's
    before = plainTextBlocksRead()
    expect(walkAll(memo)).toContain('block 49')
    expect(plainTextBlocksRead() - before).toBe(0)
    ;((fragment.get(20) as Y.XmlElement).get(0) as Y.XmlText).insert(0, 'edited ')
    expect(walkAll(memo)).toContain('edited block 19')
    expect(memo.title()).toBe('Title')
    expect(plainTextBlocksRead() - before).toBe(1)
    // A walk in steps: a block changed after the walk read it is read again by the next walk.
    before = plainTextBlocksRead()
    ;((fragment.get(2) as Y.XmlElement).get(0) as Y.XmlText).insert(0, 'x')
    ;((fragment.get(40) as Y.XmlElement).get(0) as Y.XmlText).insert(0, 'y')
    const walk = memo.walk()
    walk.next() // reads block 1 (fragment index 2), stops after it
    ;((fragment.get(2) as Y.XmlElement).get(0) as Y.XmlText).insert(0, 'z')
    let step = walk.next()
    while (!step.done) step = walk.next()
    expect(step.value).toContain('xblock 1')
    expect(step.value).toContain('yblock 39')
    expect(walkAll(memo)).toBe(readPlainText(fragment))
    memo.destroy()
  })
})
