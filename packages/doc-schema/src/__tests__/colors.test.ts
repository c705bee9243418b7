/**
 * Colours written into readers' pages (issue 24): a highlight mark's `color` and awareness colours are
 * `#rrggbb` only. A CSS `url()` (every reader's browser fetches it) or a `;` that starts further
 * declarations (a full-page overlay) is refused where an editor update enters and never rendered.
 */
import { describe, expect, test } from 'bun:test'
import type * as Y from 'yjs'
import { schema } from '../extensions.ts'
import {
  checkEditorUpdate,
  colorOf,
  contrastRatio,
  isHexColor,
  PRESENCE_COLORS,
  pickColor,
  settleColors,
} from '../index.ts'
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

  test('presence colours: white text on each, and each as text on white, reads at 4.5:1 or more (WCAG AA)', () => {
    for (const color of PRESENCE_COLORS) {
      expect(isHexColor(color), color).toBe(true)
      expect(contrastRatio(color, '#ffffff'), color).toBeGreaterThanOrEqual(4.5)
    }
  })

  test('presence colours: no two are alike, nor like the agents’ violet (CIE76 ΔE of at least 25; hue 283 vs 294 was about 8)', () => {
    let closest = Number.POSITIVE_INFINITY
    for (const [i, a] of PRESENCE_COLORS.entries())
      for (const b of PRESENCE_COLORS.slice(i + 1)) closest = Math.min(closest, deltaE(a, b))
    expect(closest).toBeGreaterThanOrEqual(25)
    // Nor like the violet of an agent's edits over MCP (modules/mcp/infra/writer.ts AGENT_COLOR).
    for (const color of PRESENCE_COLORS) expect(deltaE(color, '#7c3aed'), color).toBeGreaterThanOrEqual(25)
    expect(deltaE('#9b2bc4', '#b32bc4')).toBeLessThan(25) // two purples the hashed hues gave: caught
  })

  test("pickColor: the seed's colour when free, else one no one holds, and the same answer for the same input", () => {
    const first = colorOf('alice')
    expect(pickColor('alice', [])).toBe(first)
    expect(pickColor('alice', [first.toUpperCase()])).not.toBe(first)
    const taken: string[] = []
    for (let i = 0; i < PRESENCE_COLORS.length; i++) taken.push(pickColor(`user-${i}`, taken))
    expect(new Set(taken).size).toBe(PRESENCE_COLORS.length)
    // Everyone holds one: the seed's own (a twelfth person shares, nobody goes without).
    expect(pickColor('alice', taken)).toBe(first)
  })
})

describe('settleColors (two instances gave one colour twice)', () => {
  const [red, blue, green] = PRESENCE_COLORS as [string, string, string]
  const a = '0000000000000001'
  const b = '0000000000000002'
  const c = '0000000000000003'

  test('the smallest key keeps a clashing colour, the other takes the next free one; no clash, no change', () => {
    expect(
      settleColors([
        { key: b, color: red },
        { key: a, color: red },
      ]),
    ).toEqual(
      new Map([
        [a, red],
        [b, blue],
      ]),
    )
    // The next free colour skips one a kept key holds: c's blue stays c's, b goes on to green.
    const three = settleColors([
      { key: c, color: blue },
      { key: b, color: red },
      { key: a, color: red },
    ])
    expect(three).toEqual(
      new Map([
        [a, red],
        [c, blue],
        [b, green],
      ]),
    )
    expect(
      settleColors([
        { key: b, color: blue },
        { key: a, color: red },
      ]).get(b),
    ).toBe(blue)
  })

  test('every page gets the same answer whatever order it saw the states in', () => {
    const claims = [
      { key: c, color: red },
      { key: a, color: red },
      { key: b, color: red },
      { key: b, color: green }, // one person's tab on the other instance, given another colour
    ]
    const answers = [claims, [...claims].reverse(), [claims[2]!, claims[0]!, claims[3]!, claims[1]!]].map(
      (order) => JSON.stringify([...settleColors(order)].sort()),
    )
    expect(new Set(answers).size).toBe(1)
    const settled = settleColors(claims)
    expect(new Set(settled.values()).size).toBe(3)
    // b claims red, its first colour in palette order, not green: it clashes with a and takes blue.
    expect([settled.get(a), settled.get(b), settled.get(c)]).toEqual([red, blue, green])
  })

  test('a colour of a state without a key is not taken by a settled one; a full palette keeps the claim', () => {
    expect(
      settleColors(
        [
          { key: a, color: red },
          { key: b, color: red },
        ],
        [blue],
      ).get(b),
    ).toBe(green)
    const everyone = PRESENCE_COLORS.map((color, i) => ({ key: i.toString(16).padStart(16, '0'), color }))
    const late = 'f'.repeat(16)
    expect(settleColors([...everyone, { key: late, color: red }]).get(late)).toBe(red)
  })
})

/** CIE76 colour difference of two #rrggbb colours (sRGB D65 to CIELAB). */
function deltaE(a: string, b: string): number {
  const lab = (hex: string) => {
    const [r, g, b] = [1, 3, 5].map((i) => {
      const c = Number.parseInt(hex.slice(i, i + 2), 16) / 255
      return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4
    }) as [number, number, number]
    const f = (t: number) => (t > 0.008856 ? Math.cbrt(t) : 7.787 * t + 16 / 116)
    const x = f((0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047)
    const y = f(0.2126 * r + 0.7152 * g + 0.0722 * b)
    const z = f((0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883)
    return [116 * y - 16, 500 * (x - y), 200 * (y - z)]
  }
  const [p, q] = [lab(a), lab(b)]
  return Math.hypot(p[0]! - q[0]!, p[1]! - q[1]!, p[2]! - q[2]!)
}

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
