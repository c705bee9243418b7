import { describe, expect, test } from 'bun:test'
import { yXmlFragmentToProsemirrorJSON } from '@tiptap/y-tiptap'
import * as Y from 'yjs'
import { schema } from '../extensions.ts'
import {
  createDocumentUpdate,
  FRAGMENT_NAME,
  fragmentToJSON,
  MAX_TITLE_CHARS,
  readPlainText,
  readTitle,
  writeNewDocument,
} from '../index.ts'
import { expectOk, loadDocument, SAMPLE_MARKDOWN, UNICODE_WORDS } from './fixtures.ts'

describe('Yjs codec', () => {
  test('createDocumentUpdate: a level-1 title heading with a fresh id, then the parsed blocks', () => {
    const { fragment } = loadDocument('Plan', SAMPLE_MARKDOWN)
    const json = fragmentToJSON(fragment)
    const title = json.content![0]!
    expect(title.type).toBe('heading')
    expect(title.attrs?.level).toBe(1)
    expect(title.attrs?.['toc-id']).toMatch(/^[A-Za-z0-9_-]{16}$/)
    expect(json.content!.length).toBeGreaterThan(10)
    expect(() => schema.nodeFromJSON(json).check()).not.toThrow()
  })

  test('what we write reads back identically through TipTap’s own Yjs binding (@tiptap/y-tiptap)', () => {
    const { fragment } = loadDocument('Plan', SAMPLE_MARKDOWN)
    const ours = schema.nodeFromJSON(fragmentToJSON(fragment)).toJSON()
    const theirs = schema.nodeFromJSON(yXmlFragmentToProsemirrorJSON(fragment)).toJSON()
    expect(ours).toEqual(theirs)
  })

  test('readTitle and readPlainText walk the fragment', () => {
    const { fragment } = loadDocument(
      '  Quarterly\n plan ',
      'Para **one**\n\n- item\n\n| a | b |\n| - | - |\n| c | d |',
    )
    expect(readTitle(fragment)).toBe('Quarterly plan')
    expect(readPlainText(fragment)).toBe('Quarterly plan\nPara one\nitem\na\nb\nc\nd')
    expect(readTitle(new Y.Doc().getXmlFragment(FRAGMENT_NAME))).toBe('')
  })

  test('readPlainText with maxChars stops after the block that reaches it', () => {
    const { fragment } = loadDocument('Title', 'alpha\n\nbravo\n\ncharlie\n\ndelta')
    // "Title\nalpha\n" is 12 characters: the walk stops after alpha, never reading bravo onwards.
    expect(readPlainText(fragment, 12)).toBe('Title\nalpha')
    expect(readPlainText(fragment, 13)).toBe('Title\nalpha\nbravo')
    expect(readPlainText(fragment, 1_000)).toBe(readPlainText(fragment))
  })

  test('Unicode survives the Yjs codec and the plain-text walk', () => {
    const text = UNICODE_WORDS.join(' ')
    const { fragment } = loadDocument(text, `${text}\n\n## ${text}`)
    expect(readTitle(fragment)).toBe(text)
    expect(readPlainText(fragment)).toBe(`${text}\n${text}\n${text}`)
  })

  test('writeNewDocument writes into an empty doc in one transaction', () => {
    const doc = new Y.Doc()
    let updates = 0
    doc.on('update', () => updates++)
    expectOk(writeNewDocument(doc, 'T', 'hello'))
    expect(updates).toBe(1)
    expect(readPlainText(doc.getXmlFragment(FRAGMENT_NAME))).toBe('T\nhello')
  })

  describe('named refusals', () => {
    test('not_empty', () => {
      const doc = new Y.Doc()
      expectOk(writeNewDocument(doc, 'T'))
      const again = writeNewDocument(doc, 'T')
      expect(again.kind === 'error' && again.reason).toBe('not_empty')
    })
    test('empty_title', () => {
      const result = createDocumentUpdate(' \n ')
      expect(result.kind === 'error' && result.reason).toBe('empty_title')
      expect(result.kind === 'error' && result.message).toStartWith('title:')
    })
    test('title_too_long', () => {
      const result = createDocumentUpdate('x'.repeat(MAX_TITLE_CHARS + 1))
      expect(result.kind === 'error' && result.reason).toBe('title_too_long')
    })
    test('a Markdown refusal passes through (h1 in the body)', () => {
      const result = createDocumentUpdate('T', '# Another title')
      expect(result.kind === 'error' && result.reason).toBe('h1_not_allowed')
    })
  })
})
