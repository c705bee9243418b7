import { describe, expect, test } from 'bun:test'
import type { DocNode } from '../doc-json.ts'
import { documentToMarkdown, MAX_MARKDOWN_CHARS, parseMarkdown } from '../index.ts'
import { expectOk, SAMPLE_MARKDOWN } from './fixtures.ts'

const titled = (blocks: DocNode[]): DocNode => ({
  type: 'doc',
  content: [{ type: 'heading', attrs: { level: 1 }, content: [{ type: 'text', text: 'T' }] }, ...blocks],
})
const toMarkdown = (markdown: string, media: 'placeholder' | 'source' = 'source') =>
  documentToMarkdown({ type: 'doc', content: expectOk(parseMarkdown(markdown)) }, { media })

describe('parseMarkdown', () => {
  test('reads every GFM construct into the schema', () => {
    const blocks = expectOk(parseMarkdown(SAMPLE_MARKDOWN))
    const types = blocks.map((block) => block.type)
    for (const type of [
      'paragraph',
      'heading',
      'bulletList',
      'orderedList',
      'taskList',
      'blockquote',
      'codeBlock',
      'horizontalRule',
      'table',
      'image',
      'youtube',
      'mediaEmbed',
    ]) {
      expect(types).toContain(type)
    }
    const marks = new Set(
      JSON.stringify(blocks).match(
        /"type":"(bold|italic|strike|underline|highlight|subscript|superscript|code|link)"/g,
      ),
    )
    expect(marks.size).toBe(9)
    const task = blocks.find((block) => block.type === 'taskList')!
    expect(task.content!.map((item) => item.attrs?.checked)).toEqual([false, true])
    expect(blocks.find((block) => block.type === 'codeBlock')!.attrs?.language).toBe('ts')
  })

  test('gives every heading a fresh 16-character URL-safe id', () => {
    const blocks = expectOk(parseMarkdown('## A\n\n### B\n\n## A'))
    const ids = blocks.map((block) => block.attrs?.['toc-id'])
    expect(new Set(ids).size).toBe(3)
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9_-]{16}$/)
  })

  test('emphasis inside emphasis of the same kind is one mark, not a refusal of the whole text', () => {
    // Valid CommonMark (<em>a <em>b</em> c</em>); the schema allows a mark once per text node.
    for (const [markdown, mark] of [
      ['*a _b_ c*', 'italic'],
      ['**a __b__ c**', 'bold'],
      ['x a*b 1 _y_ 2 a*b z', 'italic'],
    ] as const) {
      const parsed = parseMarkdown(markdown)
      expect(parsed.kind).toBe('ok')
      if (parsed.kind !== 'ok') continue
      const texts = (parsed.value[0]?.content ?? []).filter((node) => node.type === 'text')
      for (const text of texts) {
        const types = (text.marks ?? []).map((m) => m.type)
        expect(new Set(types).size).toBe(types.length)
      }
      expect(texts.some((text) => text.marks?.some((m) => m.type === mark))).toBe(true)
    }
  })

  test('raw HTML stays visible text, never markup', () => {
    const blocks = expectOk(
      parseMarkdown('<script>alert(1)</script>\n\nhello <b onclick="x">bold</b> <u>under'),
    )
    const json = JSON.stringify(blocks)
    expect(json).toContain('<script>alert(1)</script>')
    expect(json).toContain('<b onclick=\\"x\\">bold</b>')
    // An unbalanced allowed tag is text too.
    expect(json).toContain('<u>under')
    expect(json).not.toContain('"underline"')
  })

  test('a line holding only a media URL or placeholder becomes an embed; other URLs stay text', () => {
    const blocks = expectOk(
      parseMarkdown(
        'https://youtu.be/abc\n\n<https://x.org/a.webm>\n\n[audio: https://x.org/p]\n\nhttps://x.org/page',
      ),
    )
    expect(blocks.map((block) => [block.type, block.attrs?.src, block.attrs?.kind])).toEqual([
      ['youtube', 'https://youtu.be/abc', undefined],
      ['mediaEmbed', 'https://x.org/a.webm', 'video'],
      ['mediaEmbed', 'https://x.org/p', 'audio'],
      ['paragraph', undefined, undefined],
    ])
  })

  describe('named refusals', () => {
    test('empty', () => {
      for (const input of ['', '   \n\n\t']) {
        const result = parseMarkdown(input)
        expect(result.kind === 'error' && result.reason).toBe('empty')
      }
    })
    test('too_large', () => {
      const result = parseMarkdown('a'.repeat(MAX_MARKDOWN_CHARS + 1))
      expect(result.kind === 'error' && result.reason).toBe('too_large')
      expect(result.kind === 'error' && result.message).toStartWith('markdown:')
      expect(parseMarkdown('a'.repeat(MAX_MARKDOWN_CHARS)).kind).toBe('ok')
    })
    test('h1_not_allowed, anywhere and in setext form', () => {
      for (const input of ['# Title', 'text\n\n# Later', 'Setext\n======']) {
        const result = parseMarkdown(input)
        expect(result.kind === 'error' && result.reason).toBe('h1_not_allowed')
      }
    })
    test('a title h1 is allowed only first, and only when asked', () => {
      expect(parseMarkdown('# Title\n\ntext', { allowTitle: true }).kind).toBe('ok')
      const later = parseMarkdown('text\n\n# Title', { allowTitle: true })
      expect(later.kind === 'error' && later.reason).toBe('h1_not_allowed')
    })
    test('heading_too_shallow', () => {
      const result = parseMarkdown('### ok\n\n## too shallow', { minHeadingLevel: 3 })
      expect(result.kind === 'error' && result.reason).toBe('heading_too_shallow')
      const level6 = parseMarkdown('###### x', { minHeadingLevel: 7 })
      expect(level6.kind === 'error' && level6.reason).toBe('heading_too_shallow')
    })
  })
})

describe('documentToMarkdown', () => {
  test('is deterministic and reads back to the same Markdown', () => {
    const once = toMarkdown(SAMPLE_MARKDOWN)
    expect(toMarkdown(SAMPLE_MARKDOWN)).toBe(once)
    expect(toMarkdown(once)).toBe(once)
  })

  test('media become readable placeholders', () => {
    const out = toMarkdown(SAMPLE_MARKDOWN, 'placeholder')
    expect(out).toContain('[image: diagram]')
    expect(out).toContain('[video: https://www.youtube.com/watch?v=dQw4w9WgXcQ]')
    expect(out).toContain('[audio: https://example.com/talk.mp3]')
    expect(toMarkdown(SAMPLE_MARKDOWN, 'source')).toContain('![diagram](https://example.com/d.png "Diagram")')
  })

  test('text that looks like Markdown syntax is escaped, not turned into structure', () => {
    const text = (value: string): DocNode => ({ type: 'paragraph', content: [{ type: 'text', text: value }] })
    const tricky = [
      '# not a heading',
      '1. not a list',
      '---',
      '- nope',
      '> nope',
      '| a | b |',
      '*x*',
      '`y`',
      '<u>z</u>',
    ]
    const doc = titled(tricky.map(text))
    const md = documentToMarkdown(doc)
    const back = expectOk(parseMarkdown(md, { allowTitle: true }))
    expect(back.slice(1).map((block) => [block.type, block.content?.[0]?.text])).toEqual(
      tricky.map((value) => ['paragraph', value]),
    )
  })

  test('adjacent lists stay two lists', () => {
    const list = (type: string, text: string): DocNode => ({
      type,
      content: [{ type: 'listItem', content: [{ type: 'paragraph', content: [{ type: 'text', text }] }] }],
    })
    const doc = titled([
      list('bulletList', 'a'),
      list('bulletList', 'b'),
      list('orderedList', 'c'),
      list('orderedList', 'd'),
    ])
    const back = expectOk(parseMarkdown(documentToMarkdown(doc), { allowTitle: true }))
    expect(back.map((block) => block.type)).toEqual([
      'heading',
      'bulletList',
      'bulletList',
      'orderedList',
      'orderedList',
    ])
  })

  test('a pipe and a line break inside a table cell keep the cell whole', () => {
    const md = '| a | b |\n| - | - |\n| x \\| y | p<br>q |'
    const out = toMarkdown(md)
    const table = expectOk(parseMarkdown(out))[0]!
    const cells = table.content![1]!.content!
    expect(cells[0]!.content![0]!.content![0]!.text).toBe('x | y')
    expect(cells[1]!.content![0]!.content!.map((node) => node.type)).toEqual(['text', 'hardBreak', 'text'])
  })
})
