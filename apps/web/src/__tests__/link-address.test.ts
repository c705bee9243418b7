/**
 * The link dialog's check of an address (link-popover.ts): what a reader's browser follows safely is
 * stored, as typed or with the scheme a person means; anything else is refused with what to type instead.
 */
import { describe, expect, test } from 'bun:test'
import { MAX_ATTRIBUTE_CHARS } from '@collab/doc-schema/editor'
import { checkLinkAddress } from '../link-popover.ts'

const href = (raw: string) => {
  const checked = checkLinkAddress(raw)
  if (!('href' in checked)) throw new Error(`refused: ${checked.problem}`)
  return checked.href
}
const problem = (raw: string) => {
  const checked = checkLinkAddress(raw)
  if ('href' in checked) throw new Error(`accepted as ${checked.href}`)
  return checked.problem
}

describe('checkLinkAddress', () => {
  test('http, https and mailto addresses are kept as typed (trimmed)', () => {
    expect(href('https://example.com/a?b=c#d')).toBe('https://example.com/a?b=c#d')
    expect(href('  http://example.com ')).toBe('http://example.com')
    expect(href('mailto:ada@example.com')).toBe('mailto:ada@example.com')
    expect(href('HTTPS://Example.com/Ü–')).toBe('HTTPS://Example.com/Ü–')
  })

  test('a bare host name becomes https, a bare e-mail address mailto', () => {
    expect(href('example.com/docs')).toBe('https://example.com/docs')
    expect(href('ada@example.com')).toBe('mailto:ada@example.com')
  })

  test('scripts, data and other schemes are refused, naming the schemes allowed', () => {
    for (const raw of [
      'javascript:alert(1)',
      'JavaScript:alert(1)',
      'data:text/html,<b>x',
      'file:///etc/passwd',
      'ftp://x.org',
    ])
      expect(problem(raw)).toContain('http, https or mailto')
  })

  test('empty, spaced, hostless and over-long addresses are refused with what to do', () => {
    expect(problem('   ')).toContain('Type an address')
    expect(problem('https://exa mple.com')).toContain('no spaces')
    expect(problem('mailto:')).toContain('after mailto:')
    expect(problem('http://')).toContain('not an address')
    expect(problem(`https://example.com/${'a'.repeat(MAX_ATTRIBUTE_CHARS)}`)).toContain(
      `longer than ${MAX_ATTRIBUTE_CHARS}`,
    )
  })
})
