/**
 * Colours that content and presence carry (a highlight mark's `color`, awareness `user.color`) end up in a
 * `style` attribute of every reader's page. Only `#rrggbb` is accepted anywhere: no CSS function
 * (`url()`, `var()`, `image-set()`), no `;` that starts another declaration, nothing a browser fetches.
 * The server checks editor updates and awareness with it; the page checks again before any style.
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

/**
 * A stable, readable colour for a seed (a handle or a user id): a hue from the seed's hash at fixed
 * saturation and lightness (white text stays legible on it), written as `#rrggbb`.
 */
export function colorOf(seed: string): string {
  let hash = 0
  for (const ch of seed) hash = (hash * 31 + ch.charCodeAt(0)) | 0
  const hue = Math.abs(hash) % 360
  // HSL(hue, 70%, 42%) to RGB.
  const s = 0.7
  const l = 0.42
  const a = s * Math.min(l, 1 - l)
  const channel = (n: number) => {
    const k = (n + hue / 30) % 12
    const value = l - a * Math.max(-1, Math.min(k - 3, 9 - k, 1))
    return Math.round(value * 255)
      .toString(16)
      .padStart(2, '0')
  }
  return `#${channel(0)}${channel(8)}${channel(4)}`
}
