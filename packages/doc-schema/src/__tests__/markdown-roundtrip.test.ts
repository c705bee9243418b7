import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { documentToMarkdown, parseMarkdown } from '../index.ts'
import { UNICODE_WORDS } from './fixtures.ts'
import { runs } from './property-runs.ts'

const piece = fc.constantFrom(
  'word',
  'two words',
  ...UNICODE_WORDS,
  ' ',
  '  ',
  '*',
  '**',
  '_',
  '__',
  '~~',
  '`',
  '#',
  '## ',
  '### ',
  '- ',
  '* ',
  '1. ',
  '2) ',
  '> ',
  '|',
  ' | ',
  '[',
  ']',
  '(',
  ')',
  '](https://x.org/a)',
  '![i](https://x.org/i.png)',
  '!',
  '<u>',
  '</u>',
  '<mark>',
  '</mark>',
  '<sub>',
  '</sup>',
  '<br>',
  '<div>',
  '\\',
  '&amp;',
  '&#x20;',
  '---',
  '```',
  '- [ ] ',
  '- [x] ',
  'https://youtu.be/x',
  '\t',
)
const line = fc.array(piece, { minLength: 0, maxLength: 8 }).map((parts) => parts.join(''))
const markdown = fc
  .array(fc.tuple(line, fc.constantFrom('\n', '\n\n', '\n  ', '\n| - | - |\n')), {
    minLength: 1,
    maxLength: 8,
  })
  .map((lines) => lines.map(([text, end]) => text + end).join(''))

function exportOf(input: string): string | null {
  const parsed = parseMarkdown(input)
  if (parsed.kind === 'error') return null
  return documentToMarkdown({ type: 'doc', content: parsed.value }, { media: 'source' })
}

describe('Markdown round trip', () => {
  test('export∘import is stable after one normalisation (generated Markdown)', () => {
    fc.assert(
      fc.property(markdown, (input) => {
        const once = exportOf(input)
        if (once === null || once === '') return
        expect(exportOf(once)).toBe(once)
      }),
      runs(400),
    )
  })

  test('Unicode text survives import and export unchanged', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...UNICODE_WORDS, 'plain'), { minLength: 1, maxLength: 6 }),
        (words) => {
          const text = words.join(' ')
          const input = `## ${text}\n\n${text} **${text}**\n\n- ${text}\n\n| ${text} |\n| - |\n| ${text} |`
          const out = exportOf(input)!
          expect(out).toContain(`## ${text}`)
          expect(out).toContain(`${text} **${text}**`)
          expect(out).toContain(`- ${text}`)
          expect(exportOf(out)).toBe(out)
        },
      ),
      runs(100),
    )
  })
})
