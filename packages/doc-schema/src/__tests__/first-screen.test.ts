/**
 * The first screen the web page is served with (first-screen.ts): written as HTML on the server from text
 * anyone with write access typed, so every text and attribute must come out escaped, no element the
 * schema does not draw and no event handler may be written, and its size is bounded by the limits
 * whatever one block holds.
 */
import { describe, expect, test } from 'bun:test'
import * as Y from 'yjs'
import { firstScreenHtml } from '../first-screen.ts'
import { FRAGMENT_NAME } from '../limits.ts'
import { loadDocument } from './fixtures.ts'

const LIMITS = { maxBlocks: 50, maxWork: 10_000 }

function paragraph(text: string, attributes: Record<string, unknown> = {}): Y.XmlElement {
  const p = new Y.XmlElement('paragraph')
  const t = new Y.XmlText()
  t.insert(0, text, attributes)
  p.insert(0, [t])
  return p
}

function fragmentOf(...blocks: Y.XmlElement[]): Y.XmlFragment {
  const doc = new Y.Doc()
  const fragment = doc.getXmlFragment(FRAGMENT_NAME)
  fragment.insert(0, blocks)
  return fragment
}

describe('firstScreenHtml', () => {
  test('draws the blocks as the editor does: headings, marks, links, lists, tables, code', () => {
    const { fragment } = loadDocument(
      'Plan',
      '## Goals\n\nA **bold** [link](https://example.com/a?b=1&c=2) and `code`.\n\n- [x] done\n\n| a | b |\n| --- | --- |\n| 1 | 2 |\n\n```ts\nif (a < b) {}\n```\n',
    )
    const { html, blocks, more } = firstScreenHtml(fragment, LIMITS)
    expect(more).toBe(false)
    expect(blocks).toBe(fragment.length)
    expect(html).toMatch(/^<h1 data-toc-id="[^"]+">Plan<\/h1><h2 [^>]*>Goals<\/h2>/)
    expect(html).toContain('<strong>bold</strong>')
    expect(html).toContain('href="https://example.com/a?b=1&amp;c=2"')
    expect(html).toContain('<code>code</code>')
    expect(html).toContain('<th colspan="1" rowspan="1"><p>a</p></th>')
    expect(html).toContain('if (a &lt; b) {}')
    // A task's checkbox on a read-only screen.
    expect(html).toMatch(/<input type="checkbox" checked="checked" disabled="">/)
  })

  test('text and attribute values are escaped; an unsafe link is not written as one', () => {
    const fragment = fragmentOf(
      paragraph('<img src=x onerror=alert(1)> & </p><script>alert(2)</script>'),
      paragraph('quote " breaks out', { link: { href: 'https://e.com/"><script>alert(3)</script>' } }),
      paragraph('javascript', { link: { href: 'javascript:alert(4)' } }),
    )
    const { html } = firstScreenHtml(fragment, LIMITS)
    expect(html).not.toContain('<script')
    expect(html).not.toContain('<img')
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt; &amp; &lt;/p&gt;&lt;script&gt;')
    expect(html).toContain('href="https://e.com/&quot;&gt;&lt;script&gt;alert(3)&lt;/script&gt;"')
    expect(html).not.toContain('javascript:')
  })

  test('bounded by blocks and by work, saying more was left out; one huge block ends the screen before it', () => {
    const many = fragmentOf(...Array.from({ length: 80 }, (_, i) => paragraph(`Paragraph ${i}`)))
    const byBlocks = firstScreenHtml(many, LIMITS)
    expect(byBlocks).toMatchObject({ blocks: 50, more: true })
    expect(byBlocks.html).toContain('Paragraph 49<')
    expect(byBlocks.html).not.toContain('Paragraph 50<')

    const huge = fragmentOf(paragraph('short'), paragraph('x'.repeat(50_000)), paragraph('after'))
    const byWork = firstScreenHtml(huge, LIMITS)
    expect(byWork).toMatchObject({ blocks: 1, more: true })
    expect(byWork.html).toBe('<p>short</p>')

    expect(firstScreenHtml(fragmentOf(...Array.from({ length: 3 }, () => paragraph('a'))), LIMITS)).toEqual({
      html: '<p>a</p><p>a</p><p>a</p>',
      blocks: 3,
      more: false,
    })
  })

  test('a block of a type the schema does not know ends the screen there', () => {
    const fragment = fragmentOf(paragraph('before'), new Y.XmlElement('marquee'), paragraph('after'))
    expect(firstScreenHtml(fragment, LIMITS)).toEqual({ html: '<p>before</p>', blocks: 1, more: true })
  })
})
