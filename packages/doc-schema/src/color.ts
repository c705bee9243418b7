/**
 * Colours that content and presence carry (a highlight mark's `color`, awareness `user.color`) end up in a
 * `style` attribute of every reader's page. Only `#rrggbb` is accepted anywhere: no CSS function
 * (`url()`, `var()`, `image-set()`), no `;` that starts another declaration, nothing a browser fetches.
 * The server checks editor updates and awareness with it; the page checks again before any style.
 *
 * Presence colours (carets, selections, name labels, the list of who is here) come from PRESENCE_COLORS: eleven
 * colours picked so that any two are far apart (CIE76 ΔE ≥ 25, so no two people get "nearly the same
 * purple"), as is each from the violet an agent's edits over MCP are drawn in (#7c3aed,
 * modules/mcp/infra/writer.ts), and white label text on each has a contrast of at least 4.5:1 (WCAG AA); the
 * same contrast holds for each as text on white. The server hands each one present in a document a colour
 * no one else there holds (pickColor, collab/awareness-guard.ts); colorOf is a seed's first choice. Two
 * instances (Redis) can still hand out one colour twice (each picks before it sees the other's state):
 * every page then settles the clash the same way from the server's presence keys (settleColors).
 */

const HEX_COLOR = /^#[0-9a-fA-F]{6}$/

/** Whether `value` is a `#rrggbb` colour (six hex digits, nothing else). */
export function isHexColor(value: unknown): value is string {
  return typeof value === 'string' && HEX_COLOR.test(value)
}

/** A problem with a colour attribute's value (null removes it), or undefined when it is `#rrggbb`. */
export function colorAttributeProblem(value: unknown): string | undefined {
  return value === null || isHexColor(value) ? undefined : 'is not a colour written as #rrggbb'
}

/** Presence colours: distinct from one another, each readable under white text and as text on white. */
export const PRESENCE_COLORS: readonly string[] = [
  '#c62828', // red
  '#1f6feb', // blue
  '#1a7f37', // green
  '#424242', // graphite (no violet: an agent's edits over MCP draw in #7c3aed)
  '#b35900', // orange
  '#0b7285', // teal
  '#c2185b', // pink
  '#5c6b00', // olive
  '#6e4b2a', // brown
  '#283593', // indigo
  '#8e2469', // plum
]

function paletteIndex(seed: string): number {
  let hash = 0
  for (const ch of seed) hash = (hash * 31 + ch.charCodeAt(0)) | 0
  return Math.abs(hash) % PRESENCE_COLORS.length
}

/** A stable presence colour for a seed (a handle or a user id), written as `#rrggbb`. */
export function colorOf(seed: string): string {
  return PRESENCE_COLORS[paletteIndex(seed)]!
}

/**
 * The seed's colour when no one else holds it, else the next presence colour no one holds (in palette
 * order), so the people in one document are told apart; the seed's own when every colour is taken.
 * `taken` is compared case-insensitively.
 */
export function pickColor(seed: string, taken: Iterable<string>): string {
  const held = new Set(Array.from(taken, (color) => color.toLowerCase()))
  const first = paletteIndex(seed)
  for (let step = 0; step < PRESENCE_COLORS.length; step++) {
    const color = PRESENCE_COLORS[(first + step) % PRESENCE_COLORS.length]!
    if (!held.has(color)) return color
  }
  return PRESENCE_COLORS[first]!
}

/** A presence key as the server writes it (collab/awareness-guard.ts): 16 lowercase hex digits. */
const PRESENCE_KEY = /^[0-9a-f]{16}$/

/** Whether `value` is a presence key as the server writes it. */
export function isPresenceKey(value: unknown): value is string {
  return typeof value === 'string' && PRESENCE_KEY.test(value)
}

/** The palette's order for a colour (a colour outside it after every one in it), then the text. */
function paletteOrder(a: string, b: string): number {
  const rank = (color: string) => {
    const index = PRESENCE_COLORS.indexOf(color.toLowerCase())
    return index < 0 ? PRESENCE_COLORS.length : index
  }
  return rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0)
}

/**
 * The colour each presence key is drawn in, when the server's colours (`claims`: a key and the colour a
 * server gave it, one per awareness state) clash: each key's claim is its first colour in palette order
 * (one person's tabs on two instances may have been given two); a claim no smaller key makes is kept;
 * each key whose claim a smaller key made takes, in key order, the next palette colour (after its claim)
 * that no kept key and nothing in `reserved` (colours of states without a key) holds, else keeps its claim
 * (every colour taken). It depends only on the set of claims, so every page that sees the same states
 * draws the same colours, without asking anyone; a key that clashes with no one keeps its server's colour.
 */
export function settleColors(
  claims: Iterable<{ key: string; color: string }>,
  reserved: Iterable<string> = [],
): Map<string, string> {
  const claimOf = new Map<string, string>()
  for (const { key, color } of claims) {
    const before = claimOf.get(key)
    if (before === undefined || paletteOrder(color, before) < 0) claimOf.set(key, color)
  }
  const keys = [...claimOf.keys()].sort()
  const settled = new Map<string, string>()
  const kept = new Set<string>()
  const clashing: string[] = []
  for (const key of keys) {
    const color = claimOf.get(key)!
    if (kept.has(color.toLowerCase())) clashing.push(key)
    else {
      kept.add(color.toLowerCase())
      settled.set(key, color)
    }
  }
  const held = new Set([...kept, ...Array.from(reserved, (color) => color.toLowerCase())])
  for (const key of clashing) {
    const claim = claimOf.get(key)!
    const start = PRESENCE_COLORS.indexOf(claim.toLowerCase()) // -1 outside the palette: from its first
    let color = claim
    for (let step = 1; step <= PRESENCE_COLORS.length; step++) {
      const next = PRESENCE_COLORS[(start + step) % PRESENCE_COLORS.length]!
      if (!held.has(next)) {
        color = next
        break
      }
    }
    held.add(color.toLowerCase())
    settled.set(key, color)
  }
  return settled
}

/** WCAG relative luminance of a `#rrggbb` colour (0 black … 1 white). */
export function relativeLuminance(hex: string): number {
  const channel = (i: number) => {
    const c = Number.parseInt(hex.slice(i, i + 2), 16) / 255
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4
  }
  return 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5)
}

/** WCAG contrast ratio of two `#rrggbb` colours (1 … 21). */
export function contrastRatio(a: string, b: string): number {
  const [light, dark] = [relativeLuminance(a), relativeLuminance(b)].sort((x, y) => y - x) as [number, number]
  return (light + 0.05) / (dark + 0.05)
}
