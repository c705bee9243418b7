/**
 * What the web page tests share: people with passwords, a browser context signed in through the real
 * form, the page's layout checks at a width, and axe-core run inside the page (serious and critical
 * violations only: those are what the tests refuse).
 */
import { afterAll, beforeAll, expect } from 'bun:test'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { type Browser, launchChromium, type Page, serveStarterKitPage } from '@collab/test-support/chromium'
import { connectClient, mcpUrlOf } from '@collab/test-support/mcp'
import { eventually, userWithToken, useTestServer } from '@collab/test-support/server'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type { Config } from '../config.ts'
import type { RunningServer } from '../server.ts'

export const PASSWORD = 'correct horse battery staple'

/**
 * A page test's server and browser: a server of the file's own (`useTestServer`, with `overrides`) and the
 * file's share of its process's Chromium (`launchChromium`), handed to `use` before the file's tests (a
 * later beforeAll can seed what they need); the browser's contexts are closed after them.
 */
export function useServerAndBrowser(
  use: (given: { server: RunningServer; browser: Browser }) => void,
  overrides: Partial<Config> = {},
): void {
  let server: RunningServer
  let browser: Browser | undefined
  useTestServer((s) => {
    server = s
  }, overrides)
  beforeAll(async () => {
    browser = await launchChromium()
    use({ server, browser })
  }, 60_000)
  afterAll(() => browser?.close())
}

/**
 * The StarterKit fixture app for a file's tests (serveStarterKitPage, served from an origin of its own as a
 * third-party app would be) and the file's share of Chromium, both ready before the tests and gone after.
 * `open` opens the app on `room` of the server at `serverUrl` with `token` and waits until its provider has
 * synced, with no page error on the way.
 */
export function useStarterKitApp() {
  let pages: Awaited<ReturnType<typeof serveStarterKitPage>> | undefined
  let browser: Browser | undefined
  beforeAll(async () => {
    pages = await serveStarterKitPage()
    browser = await launchChromium()
  }, 60_000)
  afterAll(async () => {
    await browser?.close()
    pages?.stop()
  }, 60_000)
  return {
    async open(serverUrl: string, room: string, token: string): Promise<Page> {
      if (!browser || !pages) throw new Error('the StarterKit app is not served yet (open it inside tests)')
      const page = await browser.newPage()
      const errors: string[] = []
      page.on('pageerror', (error) => errors.push(String(error)))
      await page.goto(pages.url(serverUrl, room, token))
      await eventually(
        async () => {
          expect(errors).toEqual([])
          expect(await page.evaluate('window.fixture?.synced')).toBe(true)
        },
        20_000,
        'the page’s provider to sync',
      )
      return page
    },
  }
}

/** The page's editor text (ProseMirror's DOM), as the person sees it. */
export const editorText = (page: Page) => page.$eval('.ProseMirror', (element) => element.textContent ?? '')

/** A phone's width in CSS pixels (the narrowest the page is made for). */
export const PHONE_WIDTH = 360

export async function person(server: RunningServer, handle: string) {
  const made = await userWithToken(server, handle)
  const set = await server.auth.accounts.setPassword(made.user.id, PASSWORD)
  if (set.kind === 'error') throw new Error(set.message)
  return made
}

/** What a page test of a person and their agent starts from (useOwnerWithAgent). */
export type OwnerWithAgent = {
  server: RunningServer
  browser: Browser
  owner: Awaited<ReturnType<typeof person>>
  /** The agent's MCP client. */
  agent: Client
  /** The person's document. */
  slug: string
}

/**
 * A page test's server and browser (`useServerAndBrowser`, with `overrides`) and, before the file's tests,
 * a person `handle` with their agent and a document of theirs (`ownerWithAgent`). The returned object is
 * filled in before the file's tests run (read its fields inside them, not at the describe's top); the
 * agent's client is closed after them.
 */
export function useOwnerWithAgent(
  handle: string,
  agent: { scopes: Array<'read' | 'write' | 'suggest'>; label: string },
  document: { title: string; markdown: string },
  overrides: Partial<Config> = {},
): OwnerWithAgent {
  const world = {} as OwnerWithAgent
  useServerAndBrowser((given) => {
    Object.assign(world, given)
  }, overrides)
  beforeAll(async () => {
    Object.assign(world, await ownerWithAgent(world.server, handle, agent, document))
  }, 60_000)
  afterAll(async () => {
    await world.agent?.close()
  })
  return world
}

/**
 * A person (`person`), their agent connected over MCP with an API token of `agent.scopes` labelled
 * `agent.label` (the app's name people see), and a document of theirs made from `markdown`.
 */
async function ownerWithAgent(
  server: RunningServer,
  handle: string,
  agent: { scopes: Array<'read' | 'write' | 'suggest'>; label: string },
  document: { title: string; markdown: string },
): Promise<{ owner: Awaited<ReturnType<typeof person>>; agent: Client; slug: string }> {
  const owner = await person(server, handle)
  const issued = await server.services.tokens.issue(owner.user.id, agent)
  if (issued.kind === 'error') throw new Error(issued.message)
  const client = await connectClient(mcpUrlOf(server), issued.value.token)
  const made = await server.services.documents.create(owner.user.id, document)
  if (made.kind === 'error') throw new Error(made.message)
  return { owner, agent: client, slug: made.value.slug }
}

/** A fresh browser context (its own cookies) signed in as `handle` through the sign-in form. */
export async function signedIn(
  browser: Browser,
  server: RunningServer,
  handle: string,
  viewport: { width: number; height: number } = { width: 1280, height: 800 },
): Promise<Page> {
  const context = await browser.createBrowserContext()
  const page = await context.newPage()
  await page.setViewport(viewport)
  await page.goto(`${server.url}/sign-in`)
  await page.type('#handle', handle)
  await page.type('#password', PASSWORD)
  await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')])
  return page
}

/** A fresh browser context signed in as `handle` (`signedIn`, at `viewport`) with `/d/<slug>` open (`openDocument`). */
export async function openedBy(
  browser: Browser,
  server: RunningServer,
  handle: string,
  slug: string,
  viewport?: { width: number; height: number },
): Promise<Page> {
  const page = await signedIn(browser, server, handle, viewport)
  await openDocument(page, server, slug)
  return page
}

/** Waits until the page's status says its editor is connected. */
export const connected = (page: Page) =>
  page.waitForFunction(() => document.querySelector('[data-testid=status]')?.textContent === 'Connected')

/** Opens `/d/<slug>` and waits for the editor to hold the document. */
export async function openDocument(page: Page, server: RunningServer, slug: string): Promise<void> {
  await page.goto(`${server.url}/d/${slug}`)
  await page.waitForSelector('.ProseMirror')
}

/**
 * Two open pages each put the caret in a paragraph (the first page in the first, the second in the last)
 * and type a letter: each caret is then in everyone's awareness.
 */
export async function caretsPlaced(first: Page, second: Page): Promise<void> {
  await first.click('.ProseMirror p')
  await first.keyboard.type('A')
  await second.click('.ProseMirror p:last-of-type')
  await second.keyboard.type('B')
}

/** How far the page reaches past the viewport's right edge (0 when nothing overflows), and what does. */
export async function horizontalOverflow(page: Page): Promise<{ overflow: number; widest: string[] }> {
  return page.evaluate(() => {
    const width = document.documentElement.clientWidth
    const widest = Array.from(document.querySelectorAll('body *'))
      .filter((e) => {
        const box = e.getBoundingClientRect()
        return box.width > 0 && box.right > width + 1 && !e.closest('[hidden]')
      })
      .slice(0, 5)
      .map((e) => `${e.tagName.toLowerCase()}.${e.className}`)
    return { overflow: Math.max(0, document.documentElement.scrollWidth - width), widest }
  })
}

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')

export type AxeViolation = { id: string; impact: string; help: string; targets: string[] }

/** axe-core's serious and critical violations on the page as it is now (WCAG 2.x A and AA rules). */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(AXE_SOURCE)
  return page.evaluate(async () => {
    type Violation = { id: string; impact: string; help: string; nodes: Array<{ target: string[] }> }
    const axe = (window as unknown as { axe: { run(o: unknown): Promise<{ violations: Violation[] }> } }).axe
    const result = await axe.run({ runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21aa'] } })
    return result.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => ({
        id: v.id,
        impact: v.impact,
        help: v.help,
        targets: v.nodes.slice(0, 5).map((n) => n.target.join(' ')),
      }))
  })
}

/** Parses `rgb(r, g, b)` / `rgba(r, g, b, a)` as a computed style gives it. */
export function parseRgb(css: string): { r: number; g: number; b: number; a: number } {
  const match = /^rgba?\(([\d.]+),\s*([\d.]+),\s*([\d.]+)(?:,\s*([\d.]+))?\)$/.exec(css)
  if (!match) throw new Error(`not an rgb() colour: ${css}`)
  return { r: +match[1]!, g: +match[2]!, b: +match[3]!, a: match[4] === undefined ? 1 : +match[4] }
}

/** `rgb(…)` as `#rrggbb`. */
export function rgbToHex(css: string): string {
  const { r, g, b } = parseRgb(css)
  return `#${[r, g, b].map((c) => Math.round(c).toString(16).padStart(2, '0')).join('')}`
}

/**
 * Puts the caret at the end of the first element matching `selector` whose text is `match.text` (or starts
 * with `match.startsWith`), with the editor focused: where a person clicking after its last word puts it.
 */
export async function caretAtEnd(
  page: Page,
  selector: string,
  match: { text?: string; startsWith?: string },
) {
  await page.evaluate(
    async (selector, text, prefix) => {
      // A focus the page asked for before (TipTap's focus command puts the editor's selection back into
      // the DOM in the next animation frame) lands first, not over the caret placed here.
      await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))
      const element = Array.from(document.querySelectorAll(selector)).find((e) =>
        text !== null ? e.textContent === text : e.textContent?.startsWith(prefix ?? '') === true,
      )
      if (!element) throw new Error(`no ${selector} with that text in the editor`)
      ;(document.querySelector('.ProseMirror') as HTMLElement).focus()
      const range = document.createRange()
      range.selectNodeContents(element)
      range.collapse(false)
      getSelection()!.removeAllRanges()
      getSelection()!.addRange(range)
    },
    selector,
    match.text ?? null,
    match.startsWith ?? null,
  )
  // ProseMirror reads the DOM selection on selectionchange: keys typed before it has would go where its
  // selection was (CI, 2026-12-05: a word still selected after its link was removed was typed over).
  await caretInEditor(page)
}

/**
 * Waits until the editor can take keystrokes where its caret is: focus it asked for has landed (TipTap
 * focuses in the next animation frame, and a dialog closing asks for it), the editor's element has the
 * page's focus, and ProseMirror's own selection is a caret at the DOM's. Typed before that, keys go to
 * the page's body or where ProseMirror's selection was.
 */
export async function caretSettled(page: Page): Promise<void> {
  await page.evaluate(
    () => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))),
  )
  await caretInEditor(page)
}

/** Waits until the editor's element has the page's focus and ProseMirror's selection is a caret at the DOM's. */
function caretInEditor(page: Page) {
  return page.waitForFunction(() => {
    const element = document.querySelector('.ProseMirror') as HTMLElement & {
      editor?: {
        state: { selection: { empty: boolean; from: number } }
        view: { posAtDOM(node: Node, offset: number): number }
      }
    }
    const selection = getSelection()
    if (!element?.editor || document.activeElement !== element || !selection?.anchorNode) return false
    const { state, view } = element.editor
    try {
      return (
        state.selection.empty &&
        state.selection.from === view.posAtDOM(selection.anchorNode, selection.anchorOffset)
      )
    } catch {
      return false
    }
  })
}
