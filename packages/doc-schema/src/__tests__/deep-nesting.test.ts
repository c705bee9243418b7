/**
 * A document chooses its own nesting depth (an editor writes Yjs directly), so no walk over it may
 * recurse: a blockquote nested 50,000 deep overflowed the stack in blockPlainText, and every store of that
 * document failed (reads already failed at 10,000). Built here 100,000 deep through Yjs, level by level
 * inside one transaction, as a provider's update would arrive.
 */
import { describe, expect, test } from 'bun:test'
import * as Y from 'yjs'
import type { DocNode } from '../doc-json.ts'
import { editBlocks } from '../edits/edit-blocks.ts'
import { replaceText } from '../edits/replace-text.ts'
import { readPlainText, readTitle } from '../read-document.ts'
import { liveOutline } from '../sections/live-memo.ts'
import { readOutline } from '../sections/outline.ts'
import { findSection, listSections } from '../sections/section-index.ts'
import { stableJSON } from '../sections/section-rev.ts'
import { fragmentToJSON } from '../yjs/read-y.ts'
import { cloneDocument, expectOk, loadDocument } from './fixtures.ts'

const DEPTH = 100_000

/** Appends `depth` nested blockquotes after the title, with one paragraph at the bottom. */
function appendDeepQuote(doc: Y.Doc, fragment: Y.XmlFragment, depth: number, text: string): void {
  doc.transact(() => {
    let parent: Y.XmlFragment | Y.XmlElement = fragment
    for (let level = 0; level < depth; level++) {
      const quote = new Y.XmlElement('blockquote')
      parent.insert(parent.length, [quote])
      parent = quote
    }
    const paragraph = new Y.XmlElement('paragraph')
    parent.insert(0, [paragraph])
    paragraph.insert(0, [new Y.XmlText(text)])
  })
}

/** Depth of the deepest node in ProseMirror JSON, counted without recursion. */
function jsonDepth(root: DocNode): number {
  let deepest = 0
  const stack: Array<[DocNode, number]> = [[root, 1]]
  for (let entry = stack.pop(); entry; entry = stack.pop()) {
    const [node, depth] = entry
    deepest = Math.max(deepest, depth)
    for (const child of node.content ?? []) stack.push([child, depth + 1])
  }
  return deepest
}

describe(`a blockquote nested ${DEPTH.toLocaleString('en')} deep`, () => {
  test('gives its plain text, title, outline, rev and JSON without throwing', () => {
    const { doc, fragment } = loadDocument('Deep title')
    appendDeepQuote(doc, fragment, DEPTH, 'at the bottom')

    expect(readTitle(fragment)).toBe('Deep title')
    expect(readPlainText(fragment)).toBe('Deep title\nat the bottom')
    const [section] = listSections(fragment)
    expect(section?.title).toBe('Deep title')
    expect(section?.rev).toMatch(/^[0-9a-f]{12}$/)
    const outline = readOutline(fragment)
    expect(outline).toEqual([
      {
        sectionId: section!.sectionId,
        level: 1,
        title: 'Deep title',
        rev: section!.rev,
        size: outline[0]!.size,
        children: [],
      },
    ])
    expect(outline[0]!.size).toBeGreaterThan('Deep title at the bottom'.length)
    expect(liveOutline(fragment)[0]).toMatchObject({ rev: section!.rev, size: outline[0]!.size })
    const json = fragmentToJSON(fragment)
    // doc > blockquote × DEPTH > paragraph > text
    expect(jsonDepth(json)).toBe(DEPTH + 3)

    // The same answers from a copy decoded from the encoded state, as a server loads it.
    const copy = cloneDocument(doc)
    expect(readPlainText(copy.fragment)).toBe('Deep title\nat the bottom')
    expect(listSections(copy.fragment)[0]?.rev).toBe(section!.rev)
  })

  test('replace_text reaches the bottom and the rev follows it', () => {
    const { doc, fragment } = loadDocument('Deep edits')
    appendDeepQuote(doc, fragment, DEPTH, 'old words')
    const before = listSections(fragment)[0]!
    const replaced = expectOk(replaceText(fragment, before.sectionId, before.rev, 'old words', 'new words'))
    expect(replaced.rev).not.toBe(before.rev)
    expect(readPlainText(fragment)).toBe('Deep edits\nnew words')
    expect(findSection(fragment, before.sectionId)?.rev).toBe(replaced.rev)
  })

  test('a removal that would drop media found at the bottom is refused', () => {
    const { doc, fragment } = loadDocument('Deep media')
    appendDeepQuote(doc, fragment, DEPTH, 'above the image')
    let bottom = fragment.get(1) as Y.XmlElement
    while (bottom.get(0) instanceof Y.XmlElement && bottom.nodeName === 'blockquote')
      bottom = bottom.get(0) as Y.XmlElement
    doc.transact(() => {
      const image = new Y.XmlElement('image')
      image.setAttribute('src', 'https://example.com/deep.png')
      ;(bottom.parent as Y.XmlElement).insert(0, [image])
    })
    const section = listSections(fragment)[0]!
    // Not removed: Yjs itself deletes a subtree recursively, so this test never deletes the deep block.
    const refused = editBlocks(fragment, section.sectionId, section.rev, { removeBlocks: [1] })
    expect(refused.kind === 'error' && refused.reason).toBe('media_removal_needs_flag')
    expect(readPlainText(fragment)).toBe('Deep media\nhttps://example.com/deep.png\nabove the image')
  })

  test('stableJSON writes an attribute value nested 100,000 deep', () => {
    let value: unknown = 'x'
    for (let level = 0; level < DEPTH; level++) value = level % 2 ? [value] : { k: value }
    const text = stableJSON(value)
    let expected = '"x"'
    for (let level = 0; level < DEPTH; level++) expected = level % 2 ? `[${expected}]` : `{"k":${expected}}`
    expect(text).toBe(expected)
  })
})
