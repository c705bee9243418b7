/**
 * The web bench's side in the browser (bench/lib/web.ts measures with it): a signed-in page, a document
 * opened until a text is in its editor, the time the first screen became readable, a token's arrival
 * stamped in a receiving page, one key's time to paint, and the bare TipTap editor's page (the floor).
 */
import { join } from 'node:path'
import type { RunningServer } from '@collab/hocuspocus.server/src/server.ts'
import { type Browser, type Page, serveBundledPage } from '@collab/test-support/chromium'

/** The password of the bench's users: `signedInPage` signs in with it. */
export const PASSWORD = 'bench password for the web editor'

export async function signedInPage(browser: Browser, server: RunningServer, handle: string): Promise<Page> {
  const context = await browser.createBrowserContext()
  const page = await context.newPage()
  await page.setViewport({ width: 1280, height: 900 })
  await page.goto(`${server.url}/sign-in`)
  await page.type('#handle', handle)
  await page.type('#password', PASSWORD)
  await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')])
  return page
}

/**
 * Opens a document and resolves once `text` is in its editor: the milliseconds since the navigation
 * began, and the page's own marks (ms since navigation start) of the document synced and the editor built.
 */
export async function openUntil(page: Page, url: string, text: string) {
  const start = performance.now()
  await page.goto(url)
  await page.waitForFunction(
    (t) => document.querySelector('.ProseMirror')?.textContent?.includes(t),
    { timeout: 60_000, polling: 'mutation' },
    text,
  )
  const ms = performance.now() - start
  const marks = await page.evaluate(() =>
    Object.fromEntries(performance.getEntriesByType('mark').map((m) => [m.name, m.startTime])),
  )
  return { ms, synced: marks['collab:synced'] ?? Number.NaN, built: marks['collab:editor'] ?? Number.NaN }
}

/**
 * Installed in `page` before any script of each document it opens: `window.readable` resolves with the ms
 * since navigation start at which the frame after `text` stood in a visible top-level paragraph (of the
 * served first screen or of an editor) was painted. Only the first paragraph of each is read per mutation.
 */
export function watchReadable(page: Page, text: string) {
  return page.evaluateOnNewDocument((t) => {
    const w = window as unknown as { readable?: Promise<number> }
    w.readable = new Promise((resolve) => {
      const shown = () => {
        // The first paragraph of each (the first screen, the editor): the one read first.
        const firsts = document.querySelectorAll(
          '#first-screen .prose > p:first-of-type, .ProseMirror > p:first-of-type',
        )
        for (const p of Array.from(firsts)) {
          if (p.textContent?.includes(t) && (p as HTMLElement).checkVisibility()) return true
        }
        return false
      }
      const observer = new MutationObserver(() => {
        if (!shown()) return
        observer.disconnect()
        requestAnimationFrame(() => {
          const channel = new MessageChannel()
          channel.port1.onmessage = () => resolve(performance.now())
          channel.port2.postMessage(null)
        })
      })
      observer.observe(document, { subtree: true, childList: true, characterData: true, attributes: true })
    })
  }, text)
}

export const readableAt = (page: Page) =>
  page.evaluate(() => (window as unknown as { readable: Promise<number> }).readable)

/** In the receiving page: stamps the time at which each awaited token first appears in the editor's DOM. */
export function watchTokens(page: Page) {
  return page.evaluate(() => {
    const w = window as unknown as { seen: Record<string, number>; waiting: Set<string> }
    w.seen = {}
    w.waiting = new Set()
    const editor = document.querySelector('.ProseMirror')!
    new MutationObserver((records) => {
      for (const record of records) {
        const text = record.target.textContent ?? ''
        for (const token of w.waiting) {
          if (text.includes(token)) {
            w.seen[token] = performance.timeOrigin + performance.now()
            w.waiting.delete(token)
          }
        }
      }
    }).observe(editor, { subtree: true, childList: true, characterData: true })
  })
}

/** Places the sending page's cursor at the end of its first paragraph. */
export function focusFirstParagraph(page: Page) {
  return page.evaluate(() => {
    // Focus first: focusing the editor restores its own selection, which would undo the range below.
    ;(document.querySelector('.ProseMirror') as HTMLElement).focus()
    const paragraph = document.querySelector('.ProseMirror p')!
    const range = document.createRange()
    range.selectNodeContents(paragraph)
    range.collapse(false)
    getSelection()!.removeAllRanges()
    getSelection()!.addRange(range)
  })
}

export async function keystrokeInBrowsers(sender: Page, receiver: Page, token: string): Promise<number> {
  await receiver.evaluate((t) => (window as unknown as { waiting: Set<string> }).waiting.add(t), token)
  const sent = await sender.evaluate((t) => {
    const at = performance.timeOrigin + performance.now()
    document.execCommand('insertText', false, t)
    return at
  }, token)
  const seen = await receiver.waitForFunction(
    (t) => (window as unknown as { seen: Record<string, number> }).seen[t],
    { timeout: 10_000, polling: 'mutation' },
    token,
  )
  return ((await seen.jsonValue()) as number) - sent
}

/**
 * The floor page: apps/web/bench/bare-editor.ts bundled for the browser and served from an origin of its own
 * (no stylesheet: a bare TipTap editor as anyone would start with). Its query names the socket, room and token.
 */
export async function serveBareEditor(): Promise<{
  url(ws: string, room: string, token: string): string
  stop(): void
}> {
  const pages = await serveBundledPage(join(import.meta.dir, '../../apps/web/bench/bare-editor.ts'), {
    minify: true,
  })
  return {
    url: (ws, room, token) => `${pages.origin}/?${new URLSearchParams({ ws, room, token })}`,
    stop: pages.stop,
  }
}

/**
 * One key pressed in `page` (its editor focused): milliseconds from the keydown event's own time stamp
 * (when the browser got the key) to the task after the next animation frame, i.e. once that frame was
 * painted with the transaction the key made (ProseMirror handles a typed character before the frame).
 */
export async function keystrokeToPaint(page: Page, key: string): Promise<number> {
  await page.bringToFront()
  await page.evaluate(() => {
    const w = window as unknown as { painted?: Promise<number> }
    w.painted = new Promise((resolve) => {
      document.addEventListener(
        'keydown',
        (event) => {
          const start = event.timeStamp
          requestAnimationFrame(() => {
            const channel = new MessageChannel()
            channel.port1.onmessage = () => resolve(performance.now() - start)
            channel.port2.postMessage(null)
          })
        },
        { capture: true, once: true },
      )
    })
  })
  await page.keyboard.type(key)
  return page.evaluate(() => (window as unknown as { painted: Promise<number> }).painted)
}
