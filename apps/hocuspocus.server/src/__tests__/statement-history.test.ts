/**
 * The event loop asks for a collection after every COLLECT_AFTER_TEXT_CHARS of large statement texts
 * (db/statement-history.ts): a 22 MB state written in parts left its copies outside the JavaScript heap,
 * whose collector seldom ran (the red team's 20 MiB import holds the server's growth; this checks the count).
 */
import { describe, expect, test } from 'bun:test'
import {
  COLLECT_AFTER_TEXT_CHARS,
  collectAfterLargeText,
  LARGE_PARAMETER_CHARS,
} from '../db/statement-history.ts'

describe('collections after large statement texts', () => {
  test('one per COLLECT_AFTER_TEXT_CHARS of large texts; small texts are not counted', () => {
    let asked = 0
    const collect = () => {
      asked++
    }
    // Whatever this process counted before: one text of the whole amount asks and starts the count again.
    expect(collectAfterLargeText(COLLECT_AFTER_TEXT_CHARS, collect)).toBe(true)
    asked = 0
    // Typing's small statements never count, however many.
    for (let i = 0; i < 10_000; i++) collectAfterLargeText(LARGE_PARAMETER_CHARS - 1, collect)
    expect(asked).toBe(0)
    // A state's parts: 350,000 characters of base64 each, so a collection every 12th part (4 Mi characters).
    const part = 350_000
    const perCollection = Math.ceil(COLLECT_AFTER_TEXT_CHARS / part)
    for (let n = 1; n <= perCollection * 3; n++) {
      const askedNow = collectAfterLargeText(part, collect)
      expect({ n, askedNow }).toEqual({ n, askedNow: n % perCollection === 0 })
    }
    expect(asked).toBe(3)
  })
})
