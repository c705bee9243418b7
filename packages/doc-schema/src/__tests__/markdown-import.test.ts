/**
 * Importing a person's Markdown file (importMarkdown): the title, the heading shift, front matter and HTML
 * blocks, refusals naming the line, and import → export → import of the shapes that matter (the real files
 * are markdown-corpus.test.ts's).
 */
import { describe, expect, test } from 'bun:test'
import type { DocNode } from '../doc-json.ts'
import { MAX_IMPORT_BYTES } from '../limits.ts'
import { documentToMarkdown } from '../markdown/document-to-markdown.ts'
import { importMarkdown } from '../markdown/import-markdown.ts'
import { parseMarkdown } from '../markdown/parse-markdown.ts'
import { exported, imported } from './markdown-trips.ts'

const headings = (blocks: DocNode[]) =>
  blocks
    .filter((b) => b.type === 'heading')
    .map((b) => `${b.attrs?.level} ${b.content?.map((c) => c.text).join('')}`)

describe('importMarkdown: the mapping', () => {
  test('the first # line is the title and leaves the body; without one the file name is', () => {
    const one = imported('# Project\n\nIntro.\n\n## Use\n')
    expect(one.title).toBe('Project')
    expect(headings(one.blocks)).toEqual(['2 Use'])
    expect(one.changes).toEqual([])
    expect(imported('Just text.\n').title).toBe('file-name')
  })

  test('--title: a leading # line with the same text is not repeated in the body; another one stays', () => {
    // Fails if the title heading stays in the body (the bug of issue 12: every --title import refused).
    expect(headings(imported('# Project\n\nIntro.\n', 'Project').blocks)).toEqual([])
    const other = imported('# Project\n\nIntro.\n', 'Notes')
    expect(other.title).toBe('Notes')
    expect(headings(other.blocks)).toEqual(['2 Project'])
  })

  test('further # headings are kept: every body heading moves one level deeper, level 6 stays 6', () => {
    const result = imported('# Changelog\n\n# v2\n\n## Fixes\n\n##### five\n\n###### six\n\n# v1\n')
    expect(result.title).toBe('Changelog')
    expect(headings(result.blocks)).toEqual(['2 v2', '3 Fixes', '6 five', '6 six', '2 v1'])
    expect(result.changes).toHaveLength(1)
    expect(result.changes[0]).toContain('one level deeper')
    expect(result.changes[0]).toContain('1 level-6 heading(s) stayed at level 6')
  })

  test('front matter (YAML, TOML) is kept verbatim as a code block at the top, never a heading', () => {
    const yaml = imported('---\ntitle: x\ntags: [a, b]\n---\n# Real title\n\nBody.\n')
    expect(yaml.title).toBe('Real title')
    expect(yaml.blocks[0]).toEqual({
      type: 'codeBlock',
      attrs: { language: 'yaml' },
      content: [{ type: 'text', text: 'title: x\ntags: [a, b]' }],
    })
    const toml = imported('+++\ntitle = "x"\n+++\n\nBody.\n')
    expect(toml.blocks[0]?.attrs?.language).toBe('toml')
    expect(toml.changes.some((line) => line.includes('front matter'))).toBe(true)
  })

  test('a leading HTML logo is kept verbatim as an html code block', () => {
    const html = '<p align="center">\n  <img src="logo.svg" width="100">\n</p>'
    const result = imported(`${html}\n\n# Tool\n\nText.\n`)
    expect(result.title).toBe('Tool')
    expect(result.blocks[0]).toEqual({
      type: 'codeBlock',
      attrs: { language: 'html' },
      content: [{ type: 'text', text: html }],
    })
  })

  test('typed text that looks like structure stays text through import and export', () => {
    const text = exported('# T\n\nA line with \\# hash, 1\\. number and\n\n\\---\n')
    const again = exported(text)
    expect(again).toBe(text)
    expect(again).not.toContain('\n---\n')
  })

  test('bare URLs become links and link targets are kept as written, never re-encoded or escaped', () => {
    // Fails on the agents' parser settings: `https\\://` text and `%5E` / `%E2%80%93` targets (issue 12).
    const text = exported('# T\n\nSee https://example.com/a_b and [x](https://e.com/a^b–c).\n')
    expect(text).toBe('# T\n\nSee <https://example.com/a_b> and [x](https://e.com/a^b–c).')
    expect(exported(text)).toBe(text)
    // Still no unsafe targets: a javascript: link stays text.
    expect(exported('# T\n\n[y](javascript:alert(1))\n')).not.toContain('](javascript:')
  })

  test('escapes only what would change the meaning: inline HTML, brackets and ampersands come back as written', () => {
    // Fails on the library's default escaping: `\<b>`, `\[Fix]`, `\&` (issue 12: 109 backslashes became 1,001).
    // A lone bare tag is text (issue 26): `\<div>` stays escaped, as a paired `<b>…</b>` stays HTML.
    const source = [
      '# T',
      '<a href="#geoPath" name="geoPath">#</a> d3.<b>geoPath</b>([<i>projection</i>[, <i>context</i>]])',
      '- [Fix] `assert`: keys & values, [see](https://x.org/?a=1&b=2) [1] a[0]',
      'A lone \\<div> is text; still escaped: \\<u>text\\</u>, \\&amp;, \\<br>, and at line starts:',
      '\\[a]: b',
      '\\<div> c',
    ].join('\n\n')
    const text = exported(source)
    expect(text).toBe(source)
    expect(exported(text)).toBe(text)
    // A tag written over two lines comes back on one (a line break in it is a space), still as a tag.
    expect(exported('# T\n\nsee <a\nhref="#x">x</a>\n')).toBe('# T\n\nsee <a href="#x">x</a>')
  })

  test('README badges keep their link targets and their line; images elsewhere stay blocks of their own', () => {
    // Fails without the image's `href` (the link target was lost) or `sameLine` (one block per badge).
    const source = [
      '# T',
      '[![Version](https://img.example/v.svg)](https://npm.example/p) [![CI](https://img.example/ci.svg)](https://ci.example/p)',
      'Text then a badge [![Sponsor](https://img.example/s.svg)](https://sponsor.example)',
      '![Alone](https://img.example/a.png "title")',
    ].join('\n\n')
    const result = imported(source)
    expect(
      result.blocks.map((block) => [block.type, block.attrs?.href ?? null, block.attrs?.sameLine ?? null]),
    ).toEqual([
      ['image', 'https://npm.example/p', null],
      ['image', 'https://ci.example/p', true],
      ['paragraph', null, null],
      ['image', 'https://sponsor.example', true],
      ['image', null, null],
    ])
    const text = exported(source)
    expect(text).toBe(source)
    expect(exported(text)).toBe(text)
    // What agents read keeps one placeholder per image block.
    const view = documentToMarkdown({ type: 'doc', content: result.blocks })
    expect(view).toBe(
      '[image: Version]\n\n[image: CI]\n\nText then a badge\n\n[image: Sponsor]\n\n[image: Alone]',
    )
  })

  test('marks over the same text keep a readable nesting: the longer run outside, ties fixed', () => {
    // Fails on a fixed nesting order (link always outermost wrote `**[a](u)**` as `[**a**](u)`).
    const source =
      '# T\n\n**[a](https://u.example)** and [**b** c](https://v.example) and **[d](https://w.example) e**'
    const text = exported(source)
    expect(text).toBe(source)
    expect(exported(text)).toBe(text)
  })

  test('GFM footnotes keep their labels, content and order: references and definitions as written', () => {
    // Fails without the definition rule (a one-word definition vanished as a link definition, consecutive
    // ones merged into one paragraph) or with `[^` escaped (references exported as `\\[^1]`).
    const source = [
      '# T',
      'A claim[^1] and another[^note].',
      '[^1]: https://example.com',
      '[^note]: A longer note\nwith a lazy line.\n\n    A second paragraph.',
      'After.',
    ].join('\n\n')
    const result = imported(source.replace('https://example.com\n\n[^note]', 'https://example.com\n[^note]'))
    expect(result.blocks.map((block) => block.content?.[0]?.text)).toEqual([
      'A claim[^1] and another[^note].',
      '[^1]: ',
      '[^note]: A longer note with a lazy line.',
      'After.',
    ])
    const text = exported(source)
    expect(text).toBe(
      [
        '# T',
        'A claim[^1] and another[^note].',
        '[^1]: <https://example.com>',
        '[^note]: A longer note with a lazy line.\\\nA second paragraph.',
        'After.',
      ].join('\n\n'),
    )
    expect(exported(text)).toBe(text)
    // The agents' parser reads them the same way.
    const agents = parseMarkdown('[^a]: word\n[^b]: two words')
    expect(agents.kind === 'ok' && agents.value.map((block) => block.content?.[0]?.text)).toEqual([
      '[^a]: word',
      '[^b]: two words',
    ])
  })

  test('a list mixing task and plain items keeps every checkbox (consecutive lists, one per kind)', () => {
    // Fails on the old conversion: one plain list, `- \\[x] done` (issue 12).
    const text = exported('# T\n\n- [x] done\n- plain\n- [ ] todo\n')
    expect(text).toBe('# T\n\n- [x] done\n\n* plain\n\n- [ ] todo')
    expect(exported(text)).toBe(text)
  })

  test('a real-looking README (front matter, HTML logo, badges, several # headings, footnotes) comes back recognisably', () => {
    // The "done when" file: everything it names, in one file, through import → export → import.
    const source = [
      '---\nname: tool\n---',
      '<p align="center">\n  <img src="logo.svg" width="100">\n</p>',
      '# Tool',
      '[![CI](https://img.example/ci.svg)](https://ci.example) [![npm](https://img.example/v.svg)](https://npm.example)',
      'A <b>fast</b> tool[^speed] by [us](https://us.example), see https://docs.example/a_b.',
      '# Usage',
      '- [x] done\n- plain',
      '# Changelog',
      '[^speed]: Measured on https://bench.example.',
    ].join('\n\n')
    const result = imported(source)
    expect(result.title).toBe('Tool')
    expect(result.changes).toHaveLength(3)
    const text = exported(source)
    expect(text).toBe(
      [
        '# Tool',
        '```yaml\nname: tool\n```',
        '```html\n<p align="center">\n  <img src="logo.svg" width="100">\n</p>\n```',
        '[![CI](https://img.example/ci.svg)](https://ci.example) [![npm](https://img.example/v.svg)](https://npm.example)',
        'A <b>fast</b> tool[^speed] by [us](https://us.example), see <https://docs.example/a_b>.',
        '## Usage',
        '- [x] done\n\n* plain',
        '## Changelog',
        '[^speed]: Measured on <https://bench.example>.',
      ].join('\n\n'),
    )
    expect(exported(text)).toBe(text)
  })

  test('a file over MAX_IMPORT_BYTES is refused, naming the limit and what to do', () => {
    const result = importMarkdown('x'.repeat(MAX_IMPORT_BYTES + 1), { fallbackTitle: 'big' })
    expect(result.kind).toBe('error')
    if (result.kind === 'error') {
      expect(result.reason).toBe('too_large')
      expect(result.message).toContain('split the file')
    }
  })
})
