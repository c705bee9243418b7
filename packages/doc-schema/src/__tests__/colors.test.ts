/**
 * Colours written into readers' pages (issue 24): a highlight mark's `color` and awareness colours are
 * `#rrggbb` only. A CSS `url()` (every reader's browser fetches it) or a `;` that starts further
 * declarations (a full-page overlay) is refused where an editor update enters and never rendered.
 */
import { describe, expect, test } from 'bun:test'
import type * as Y from 'yjs'
import { checkEditorUpdate, colorOf, isHexColor, schema } from '../index.ts'
import { changeOf, cloneDocument, loadDocument } from './fixtures.ts'

const HOSTILE = [
  'url(https://evil.example/track.png)',
  'red; position: fixed; inset: 0',
  '#fff',
  '#ff00ff80',
  ' #ff00ff',
  'rgb(1, 2, 3)',
  'var(--x)',
  '',
]

describe('isHexColor and colorOf', () => {
  test('only #rrggbb passes; CSS functions, shorthand, alpha, padding and declarations do not', () => {
    expect(isHexColor('#a1B2c3')).toBe(true)
    for (const value of [...HOSTILE, null, undefined, 0xffffff, ['#ffffff']])
      expect(isHexColor(value), String(value)).toBe(false)
  })

  test('colorOf gives a stable #rrggbb colour per seed, different for different seeds', () => {
    for (const seed of ['alice', 'bob', 'u_123', '', '✦'.repeat(300)]) {
      expect(isHexColor(colorOf(seed)), seed).toBe(true)
      expect(colorOf(seed)).toBe(colorOf(seed))
    }
    expect(colorOf('alice')).not.toBe(colorOf('bob'))
  })
})

function highlightUpdate(color: unknown) {
  const { doc: server } = loadDocument('Plan', 'Some text to highlight.')
  const { doc: editor, fragment } = cloneDocument(server)
  const update = changeOf(server, editor, () =>
    ((fragment.get(1) as Y.XmlElement).get(0) as Y.XmlText).format(0, 4, { highlight: { color } }),
  )
  return checkEditorUpdate(server, update)
}

describe('a highlight mark’s colour where editor updates enter (checkEditorUpdate)', () => {
  test('a #rrggbb colour and no colour pass', () => {
    expect(highlightUpdate('#ffcc00').ok).toBe(true)
    expect(highlightUpdate(null).ok).toBe(true)
  })

  test('a url(), a declaration list or any other colour form is refused with the reason', () => {
    for (const color of HOSTILE) {
      const check = highlightUpdate(color)
      expect(check.ok, color).toBe(false)
      if (!check.ok) expect(check.reason).toContain('mark "highlight" attribute "color" is not a colour')
    }
  })
})

describe('a highlight mark’s colour where it is rendered (the editors’ schema)', () => {
  const toDOM = (color: unknown) =>
    JSON.stringify(schema.marks.highlight!.spec.toDOM!(schema.marks.highlight!.create({ color }), true))

  test('a stored bad colour renders as a plain highlight: no style, nothing to fetch', () => {
    for (const color of HOSTILE) {
      const rendered = toDOM(color)
      expect(rendered, color).not.toContain('style')
      expect(rendered).not.toContain('url(')
      expect(rendered).not.toContain('position')
    }
  })

  test('a #rrggbb colour is rendered as the background', () => {
    expect(toDOM('#ffcc00')).toContain('background-color: #ffcc00')
  })
})
