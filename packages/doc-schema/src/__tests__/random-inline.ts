/**
 * Random inline content for the phrasing writer's differential test (phrasing-writer.test.ts): runs of
 * text with random sets of every mark the schema has, neighbours often sharing some of them (so marks nest
 * and continue across runs), text heavy in characters Markdown may need escaped, spaces at run edges,
 * empty runs, hard breaks, links with odd targets and titles, and suggestion marks. Seeded: a failure
 * replays from its seed.
 */
import type { DocMark, DocNode } from '../doc-json.ts'
import type { Rng } from './seeded-random.ts'

const PIECES = [
  'a',
  'b',
  'word',
  'x1',
  '12',
  '1.',
  '2)',
  ' ',
  ' ',
  '  ',
  '\t',
  '\u00a0',
  'é',
  '中',
  '😀',
  ...'*_~`[]()<>&!#|\\:.-+="\'{}^@$%;/?,'.split(''),
  '**',
  '__',
  '~~',
  '``',
  '***',
  '[x]',
  '[ ]',
  '[a]:',
  '[^1]',
  '](',
  '![',
  '&amp;',
  '&#35;',
  '&x',
  '<b>',
  '</i>',
  '<u>',
  '<br>',
  '<kbd>',
  '<div>',
  '<!-- c -->',
  '<T>',
  'a < b',
  'https://e.x/a_(b)',
  'https://e.x',
  'www.e.x',
  'a@b.co',
  'ps:/',
  '{++',
  '--}',
  '- ',
  '+ ',
  '# ',
  '> ',
  '1. ',
  '| a |',
  '---',
  '===',
  '\n',
  '\r\n',
  '\uE000\uE001\uE002',
]

const HREFS = [
  'https://e.x/',
  'https://e.x',
  'u',
  '',
  '#h',
  'a b',
  'a(b',
  'a)b',
  'a(b)c',
  '<x>',
  'x&amp;y',
  'x&y',
  'mailto:a@b.co',
  'a\nb',
  '\\',
  'a*b_c',
  'é',
]
const TITLES = [null, 'T', '"q"', "it's", 'a)', '&amp;', '']

/** Mark types with how to make one; a suggestion's id is one of two, so neighbours can share it. */
const MAKERS: Array<(rng: Rng) => DocMark> = [
  () => ({ type: 'bold' }),
  () => ({ type: 'italic' }),
  () => ({ type: 'strike' }),
  () => ({ type: 'code' }),
  (rng) => ({ type: 'link', attrs: { href: pick(rng, HREFS), title: pick(rng, TITLES) } }),
  () => ({ type: 'underline' }),
  () => ({ type: 'highlight' }),
  () => ({ type: 'subscript' }),
  () => ({ type: 'superscript' }),
  (rng) => ({ type: 'suggestionInsert', attrs: { id: rng() < 0.5 ? 's1' : 's2' } }),
  (rng) => ({ type: 'suggestionDelete', attrs: { id: rng() < 0.5 ? 's3' : 's4' } }),
]

export function pick<T>(rng: Rng, list: readonly T[]): T {
  return list[Math.floor(rng() * list.length)]!
}

/** Letters next to markers decide how attention is written: a third of the pieces are words. */
const WORDS = ['a', 'b', 'word', 'x1', 'é', '中']

function text(rng: Rng): string {
  // Now and then an empty run (only JSON holds those; Yjs does not).
  const count = rng() < 0.05 ? 0 : 1 + Math.floor(rng() * 4)
  let out = ''
  for (let i = 0; i < count; i++) out += rng() < 0.35 ? pick(rng, WORDS) : pick(rng, PIECES)
  // Mostly without line breaks, as editors and imports write text.
  return rng() < 0.8 ? out.replace(/[\r\n]/g, ' ') : out
}

/** A mark set like `previous` (one mark added or dropped), one mark, or a fresh set. */
function nextMarks(rng: Rng, previous: DocMark[]): DocMark[] {
  const roll = rng()
  if (roll < 0.2) return previous
  if (roll < 0.4 && previous.length > 0) {
    const drop = Math.floor(rng() * previous.length)
    return previous.filter((_, i) => i !== drop)
  }
  if (roll < 0.65) {
    const mark = pick(rng, MAKERS)(rng)
    return previous.some((m) => m.type === mark.type) ? previous : [...previous, mark]
  }
  if (roll < 0.85) return rng() < 0.2 ? [] : [pick(rng, MAKERS)(rng)]
  const fresh: DocMark[] = []
  for (const make of MAKERS) if (rng() < 0.2) fresh.push(make(rng))
  return fresh
}

/** Random inline content: 0 to `maxRuns` text runs and hard breaks. */
export function randomInline(rng: Rng, maxRuns = 24): DocNode[] {
  const count = Math.floor(rng() * (maxRuns + 1))
  const nodes: DocNode[] = []
  let marks: DocMark[] = []
  for (let i = 0; i < count; i++) {
    if (rng() < 0.06) {
      nodes.push({ type: 'hardBreak' })
      continue
    }
    marks = nextMarks(rng, marks)
    const node: DocNode = { type: 'text', text: text(rng) }
    if (marks.length > 0) node.marks = marks
    nodes.push(node)
  }
  return nodes
}

/** The inline content in one of the places it is written from: where escaping and breaks differ. */
export function inContext(rng: Rng, inline: DocNode[]): DocNode[] {
  const paragraph: DocNode = { type: 'paragraph', content: inline }
  const other = (): DocNode => ({ type: 'paragraph', content: [{ type: 'text', text: 'before' }] })
  switch (Math.floor(rng() * 8)) {
    case 0:
      return [paragraph]
    case 1:
      return [other(), paragraph]
    case 2:
      return [{ type: 'heading', attrs: { level: 2 }, content: inline }]
    case 3:
      return [{ type: 'bulletList', content: [{ type: 'listItem', content: [paragraph] }] }]
    case 4:
      return [
        {
          type: 'taskList',
          content: [{ type: 'taskItem', attrs: { checked: false }, content: [paragraph] }],
        },
      ]
    case 5:
      return [{ type: 'blockquote', content: [paragraph] }]
    case 6:
      return [table([paragraph])]
    default:
      // Two blocks in one cell share its line.
      return [table([other(), paragraph])]
  }
}

function table(cell: DocNode[]): DocNode {
  return {
    type: 'table',
    content: [
      { type: 'tableRow', content: [{ type: 'tableHeader', content: [{ type: 'paragraph' }] }] },
      { type: 'tableRow', content: [{ type: 'tableCell', content: cell }] },
    ],
  }
}
