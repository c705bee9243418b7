/**
 * Debian's Chromium (`apt-get install -y chromium`; .ci/run installs it), driven by puppeteer-core: no
 * browser is downloaded. Tests that need it skip when it is absent (`describe.skipIf(!CHROMIUM)`); the
 * benchmarks import it from here too (`@collab/test-support/chromium`).
 */
import { join } from 'node:path'
import puppeteer, { type Browser } from 'puppeteer-core'
import { APP_DIR } from './process.ts'

export type { Browser, Page } from 'puppeteer-core'

export const CHROMIUM = Bun.which('chromium') ?? undefined

export function launchChromium(): Promise<Browser> {
  if (!CHROMIUM) throw new Error('chromium is not installed: apt-get install -y chromium')
  return puppeteer.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] })
}

/**
 * A browser script (`entrypoint`, bundled with Bun.build) on a page of its own, served from an origin of
 * its own, as a third-party app would be: `<div id="editor">` and the script; the page reads its query.
 */
export async function serveBundledPage(
  entrypoint: string,
  options: { minify?: boolean } = {},
): Promise<{ origin: string; stop(): void }> {
  const built = await Bun.build({ entrypoints: [entrypoint], target: 'browser', minify: options.minify })
  if (!built.success) throw new Error(built.logs.join('\n'))
  const script = await built.outputs[0]!.text()
  const pages = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch(request) {
      if (new URL(request.url).pathname === '/page.js')
        return new Response(script, { headers: { 'content-type': 'text/javascript' } })
      return new Response(
        '<!doctype html><meta charset="utf-8"><div id="editor"></div><script type="module" src="/page.js"></script>',
        { headers: { 'content-type': 'text/html' } },
      )
    },
  })
  return { origin: `http://127.0.0.1:${pages.port}`, stop: () => pages.stop(true) }
}

/**
 * The StarterKit fixture app (fixtures/starterkit-page.ts: TipTap's StarterKit bound with Collaboration to
 * a Hocuspocus provider). Its page reads `ws`, `room` and `token` from the query.
 */
export function serveStarterKitPage(): Promise<{ origin: string; stop(): void }> {
  return serveBundledPage(join(APP_DIR, 'src/__tests__/fixtures/starterkit-page.ts'))
}
