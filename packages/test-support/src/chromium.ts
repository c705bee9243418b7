/**
 * Debian's Chromium (`apt-get install -y chromium`; .ci/run installs it), driven by puppeteer-core: no
 * browser is downloaded. Tests that need it skip when it is absent (`describe.skipIf(!CHROMIUM)`); the
 * benchmarks import it from here too (`@collab/test-support/chromium`).
 */
import { join } from 'node:path'
import puppeteer, { type Browser, type BrowserContext } from 'puppeteer-core'
import { APP_DIR } from './process.ts'

export type { Browser, Page } from 'puppeteer-core'

export const CHROMIUM = Bun.which('chromium') ?? undefined

let running: Promise<Browser> | undefined

/**
 * This process's one Chromium, launched at the first call. Bun emits no 'exit' event at the end of a test
 * run, so puppeteer's exit handler never ends it: it is driven over a pipe (`pipe: true`) instead of a
 * WebSocket, and Chromium exits by itself when the pipe closes with this process.
 */
function sharedChromium(): Promise<Browser> {
  if (!CHROMIUM) throw new Error('chromium is not installed: apt-get install -y chromium')
  running ??= puppeteer
    .launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'], pipe: true })
    .then((browser) => {
      browser.once('disconnected', () => {
        running = undefined
      })
      return browser
    })
  running.catch(() => {
    running = undefined
  })
  return running
}

/**
 * A browser for one test file: a share of this process's one Chromium (`bun run test` runs a worker's
 * files in one process, `--no-isolate`), as a Browser whose pages and contexts are its own. Launching
 * Chromium per file cost ~1 s of CPU each, a dozen times a pass. Its `newPage()` opens in a context of its
 * own (cookies and storage are not shared with another file's pages, as they were not with another
 * file's Chromium); `createBrowserContext()` is Chromium's; `close()` closes every context it opened and
 * leaves Chromium running for the next file.
 */
export async function launchChromium(): Promise<Browser> {
  const browser = await sharedChromium()
  const own = await browser.createBrowserContext()
  const contexts: BrowserContext[] = [own]
  return new Proxy(browser, {
    get(target, property) {
      if (property === 'newPage') return () => own.newPage()
      if (property === 'createBrowserContext')
        return async (...args: Parameters<Browser['createBrowserContext']>) => {
          const context = await target.createBrowserContext(...args)
          contexts.push(context)
          return context
        }
      if (property === 'close')
        return async () => {
          for (const context of contexts.splice(0)) {
            if (!context.closed) await context.close().catch(() => undefined)
          }
        }
      const value = Reflect.get(target, property, target)
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
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
 * a Hocuspocus provider). Its page reads `ws`, `room` and `token` from the query: `url` writes it for a
 * server's WebSocket.
 */
export async function serveStarterKitPage(): Promise<{
  origin: string
  url(serverUrl: string, room: string, token: string): string
  stop(): void
}> {
  const pages = await serveBundledPage(join(APP_DIR, 'src/__tests__/fixtures/starterkit-page.ts'))
  const url = (serverUrl: string, room: string, token: string) =>
    `${pages.origin}/?${new URLSearchParams({ ws: serverUrl.replace(/^http/, 'ws'), room, token })}`
  return { ...pages, url }
}
