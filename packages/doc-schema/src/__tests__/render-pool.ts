/**
 * Blocks whose Markdown depends on their neighbours or is empty, next to every GFM construct: the pool the
 * render tests draw documents from (markdown-prefix.test.ts: a start of the render; markdown-pieces.test.ts:
 * the render in pieces), each holding its way of writing to the whole render.
 */
import type { DocNode } from '../doc-json.ts'
import { parseMarkdown } from '../index.ts'
import { expectOk, SAMPLE_MARKDOWN, UNICODE_WORDS } from './fixtures.ts'

export const text = (value: string): DocNode => ({ type: 'text', text: value })
export const paragraph = (value: string): DocNode => ({ type: 'paragraph', content: [text(value)] })
export const item = (...content: DocNode[]): DocNode => ({ type: 'listItem', content })
export const bullets = (...items: DocNode[]): DocNode => ({ type: 'bulletList', content: items })

const TRICKY: DocNode[] = [
  bullets(item(paragraph('a')), item(paragraph('b'))),
  bullets(item(paragraph('c'))),
  { type: 'orderedList', attrs: { start: 3 }, content: [item(paragraph('three'))] },
  { type: 'orderedList', attrs: { start: 1 }, content: [item(paragraph('one'))] },
  {
    type: 'taskList',
    content: [{ type: 'taskItem', attrs: { checked: true }, content: [paragraph('done')] }],
  },
  bullets(item({ type: 'horizontalRule' }), item(paragraph('after a rule'))),
  bullets(item(paragraph('outer'), bullets(item(paragraph('inner'), bullets(item(paragraph('deep'))))))),
  bullets(item({ type: 'paragraph' }, bullets(item(paragraph('under an empty first line'))))),
  { type: 'bulletList', content: [] },
  { type: 'paragraph' },
  { type: 'paragraph', content: [{ type: 'hardBreak' }] },
  paragraph('- not a list * [x] # no heading 1. no item'),
  paragraph(`${'long line '.repeat(30)}end`),
  paragraph(UNICODE_WORDS.join(' ')),
  { type: 'heading', attrs: { level: 2 }, content: [text('Heading')] },
  { type: 'codeBlock', attrs: { language: 'ts' }, content: [text('const a = 1\n\n\nconst b = 2')] },
  { type: 'horizontalRule' },
  { type: 'blockquote', content: [paragraph('quoted'), bullets(item(paragraph('in a quote')))] },
  { type: 'mystery' },
  // Badges: an image with a link, and one written on the line of the block before it (media: 'source').
  { type: 'image', attrs: { src: 'https://img.example/a.svg', alt: 'a', href: 'https://x.org' } },
  {
    type: 'image',
    attrs: { src: 'https://img.example/b.svg', alt: 'b', href: 'https://y.org', sameLine: true },
  },
  { type: 'image', attrs: { src: 'https://img.example/c.svg', alt: 'c', sameLine: true } },
]
export const POOL: DocNode[] = [...expectOk(parseMarkdown(SAMPLE_MARKDOWN)), ...TRICKY]
