/**
 * The page's check of remote awareness states before they are drawn (issue 24): a forged state must not
 * restyle the page (a colour that is a declaration list drew a full-page overlay), fetch anything (a CSS
 * `url()` colour), claim an agent badge the server did not write, or draw a name longer than its entry.
 */
import { describe, expect, test } from 'bun:test'
import { MAX_NAME_CHARS, presentUser, safeColor } from '../presence.ts'

const HEX = /^#[0-9a-f]{6}$/i

describe('presentUser', () => {
  test('a #rrggbb colour, the name and the server’s agent flag pass as they are', () => {
    expect(presentUser({ user: { name: 'Bob', color: '#1a2b3c', agent: false } })).toEqual({
      name: 'Bob',
      color: '#1a2b3c',
      agent: false,
    })
    expect(presentUser({ user: { name: "alice's agent", color: '#7c3aed', agent: true } })?.agent).toBe(true)
  })

  test('a colour that is not #rrggbb (url(), declarations, var(), rgb(), shorthand) becomes the name’s colour', () => {
    for (const color of [
      'url(https://evil.example/t.png)',
      'red; position: fixed; inset: 0; z-index: 9999',
      'var(--x)',
      'rgb(0,0,0)',
      '#fff',
      { toString: () => '#ffffff' },
      undefined,
    ]) {
      const user = presentUser({ user: { name: 'Mallory', color } })
      expect(user?.color, String(color)).toMatch(HEX)
      expect(user?.color).toBe(safeColor(null, 'Mallory'))
    }
  })

  test('an agent badge only from agent: true; other truthy values are not a badge', () => {
    for (const agent of ['true', 1, {}, [true]])
      expect(presentUser({ user: { name: 'x', agent } })?.agent).toBe(false)
  })

  test('a long or multi-line name is cut to one line of at most MAX_NAME_CHARS characters', () => {
    const user = presentUser({
      user: { name: `✦ alice (owner)\n\n${'sign in again at evil.example '.repeat(50)}` },
    })
    expect(Array.from(user!.name).length).toBe(MAX_NAME_CHARS)
    expect(user!.name).not.toContain('\n')
  })

  test('a presence key is kept only as the server writes it (16 lowercase hex digits); nothing else is one', () => {
    const key = '0123456789abcdef'
    expect(presentUser({ user: { name: 'x', key } })?.key).toBe(key)
    for (const bad of ['0123456789ABCDEF', '0', `${key}0`, ' 0123456789abcde', 12, null, [key]])
      expect(presentUser({ user: { name: 'x', key: bad } })?.key, String(bad)).toBeUndefined()
  })

  test('a state that names nobody is not drawn', () => {
    for (const state of [
      null,
      {},
      { user: null },
      { user: 'x' },
      { user: { name: 42 } },
      { user: { name: '  ' } },
    ])
      expect(presentUser(state), JSON.stringify(state)).toBeNull()
  })
})
