import { describe, expect, test } from 'bun:test'
import { extensions, schema } from '../extensions.ts'

/** The blocks and marks the issue lists, by the schema's table that holds them. */
const LISTED: [kind: 'nodes' | 'marks', names: string][] = [
  ['nodes', 'heading paragraph bulletList orderedList taskList taskItem blockquote codeBlock horizontalRule'],
  ['nodes', 'table tableHeader tableCell image youtube mediaEmbed hardBreak'],
  ['marks', 'bold italic strike underline code link highlight subscript superscript'],
]

describe('schema', () => {
  test('builds without a DOM (the server has no window or document)', () => {
    expect(typeof (globalThis as { document?: unknown }).document).toBe('undefined')
    expect(extensions.length).toBeGreaterThan(20)
    expect(schema.topNodeType.name).toBe('doc')
  })

  test('has every block and mark the issue lists', () => {
    for (const [kind, names] of LISTED) {
      const present = Object.keys(schema[kind])
      for (const name of names.split(' ')) expect(present).toContain(name)
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
