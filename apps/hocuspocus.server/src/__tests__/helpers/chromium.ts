/**
 * Debian's Chromium (`apt-get install -y chromium`; .ci/run installs it), driven by puppeteer-core: no
 * browser is downloaded. Tests that need it skip when it is absent (`describe.skipIf(!CHROMIUM)`); the
 * benchmarks import it from here too (the bench folder is not a package and cannot resolve puppeteer).
 */
import puppeteer, { type Browser } from 'puppeteer-core'

export type { Browser, Page } from 'puppeteer-core'

export const CHROMIUM = Bun.which('chromium') ?? undefined

export function launchChromium(): Promise<Browser> {
  if (!CHROMIUM) throw new Error('chromium is not installed: apt-get install -y chromium')
  return puppeteer.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] })
}
