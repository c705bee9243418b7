import { describe, expect, test } from 'bun:test'
import { extensions, schema } from '../index.ts'

describe('schema', () => {
  test('builds without a DOM (the server has no window or document)', () => {
    expect(typeof (globalThis as { document?: unknown }).document).toBe('undefined')
    expect(extensions.length).toBeGreaterThan(20)
    expect(schema.topNodeType.name).toBe('doc')
  })

  test('has every block and mark the issue lists', () => {
    const nodes = Object.keys(schema.nodes)
    for (const name of [
      'heading',
      'paragraph',
      'bulletList',
      'orderedList',
      'taskList',
      'taskItem',
      'blockquote',
      'codeBlock',
      'horizontalRule',
      'table',
      'tableHeader',
      'tableCell',
      'image',
      'youtube',
      'mediaEmbed',
      'hardBreak',
    ]) {
      expect(nodes).toContain(name)
    }
    const marks = Object.keys(schema.marks)
    for (const name of [
      'bold',
      'italic',
      'strike',
      'underline',
      'code',
      'link',
      'highlight',
      'subscript',
      'superscript',
    ]) {
      expect(marks).toContain(name)
    }
  })

  test('the document is a heading then blocks: a paragraph first is invalid', () => {
    const bad = { type: 'doc', content: [{ type: 'paragraph' }] }
    expect(() => schema.nodeFromJSON(bad).check()).toThrow()
    const good = { type: 'doc', content: [{ type: 'heading', attrs: { level: 1 } }, { type: 'paragraph' }] }
    expect(() => schema.nodeFromJSON(good).check()).not.toThrow()
  })

  test('inline code combines with bold and links (TipTap default excludes every mark)', () => {
    const text = {
      type: 'text',
      text: 'x',
      marks: [{ type: 'link', attrs: { href: 'https://a.b' } }, { type: 'bold' }, { type: 'code' }],
    }
    const doc = { type: 'doc', content: [{ type: 'heading', attrs: { level: 1 }, content: [text] }] }
    expect(() => schema.nodeFromJSON(doc).check()).not.toThrow()
  })

  test('headings carry the toc-id attribute', () => {
    expect(Object.keys(schema.nodes.heading!.spec.attrs ?? {})).toContain('toc-id')
  })
})
