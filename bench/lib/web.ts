/**
 * The web editor in a real browser (Debian's Chromium through puppeteer-core), each figure beside its floor
 * measured in the same run:
 * - first paint: opening `/d/<slug>` until the document's last paragraph is in the editor's DOM, against a
 *   bare Hocuspocus provider (no browser, no TipTap) connecting and syncing the same document;
 * - first screen readable: opening `/d/<slug>` until the frame after the document's first paragraph is in a
 *   visible element (the first screen the page is served with, or the editor), against a bare TipTap editor
 *   (apps/web/bench/bare-editor.ts) opening the same document, measured the same way, in turn;
 * - keystroke to another browser: an input event in one page (`insertText`, as typing or an IME commit
 *   sends) until the text is in the other page's editor DOM, against one bare provider's insert reaching
 *   another bare provider. Both pages stamp times with the same clock (performance.timeOrigin + now());
 * - keystroke to paint: a key pressed in the typing page until the frame after it is painted (what the person
 *   typing feels), against a bare TipTap editor (the project's schema and Collaboration, nothing of the page:
 *   apps/web/bench/bare-editor.ts) typing into a copy of the same document, the samples taken in turn.
 * Skipped (no rows) when `chromium` is not installed.
 */

import { FRAGMENT_NAME } from '@collab/doc-schema'
import { SEARCH_REFRESH_MS } from '@collab/hocuspocus.server/src/collab/store-policy.ts'
import { CHROMIUM, launchChromium } from '@collab/test-support/chromium'
import { connectProvider } from '@collab/test-support/provider'
import { startFreshServer, userWithToken } from '@collab/test-support/server'
import { docOf, Y } from '../deps.ts'
import type { Fixture } from './fixtures.ts'
import { createFixtureDocument } from './server.ts'
import { percentile, summarize } from './stats.ts'
import { medianRatioRow, type Row } from './types.ts'
import {
  focusFirstParagraph,
  keystrokeInBrowsers,
  keystrokeToPaint,
  openUntil,
  PASSWORD,
  readableAt,
  serveBareEditor,
  signedInPage,
  watchReadable,
  watchTokens,
} from './web-pages.ts'

/** The text of the fixture's last paragraph: once it is in the editor's DOM, the whole document is. */
function lastParagraphText(state: Uint8Array): string {
  const doc = docOf(state)
  const blocks = doc.getXmlFragment(FRAGMENT_NAME).toArray()
  for (let i = blocks.length - 1; i >= 0; i--) {
    const block = blocks[i]
    if (block instanceof Y.XmlElement && block.nodeName === 'paragraph') {
      const text = block
        .toArray()
        .map((t) => (t instanceof Y.XmlText ? t.toString().replace(/<[^>]+>/g, '') : ''))
        .join('')
      if (text.length > 20) return text.slice(-20)
    }
  }
  throw new Error('the fixture has no paragraph')
}

/** The start of the document's first top-level paragraph (what a person reads first under the title). */
function firstParagraphText(state: Uint8Array): string {
  const doc = docOf(state)
  for (const block of doc.getXmlFragment(FRAGMENT_NAME).toArray()) {
    if (block instanceof Y.XmlElement && block.nodeName === 'paragraph') {
      const text = block
        .toArray()
        .map((t) => (t instanceof Y.XmlText ? t.toString().replace(/<[^>]+>/g, '') : ''))
        .join('')
      if (text.length > 0) return text.slice(0, 20)
    }
  }
  throw new Error('the fixture has no paragraph')
}

/** The floor: one bare provider inserts text, another bare provider (same process, same clock) has it. */
async function keystrokeInProviders(
  sender: ReturnType<typeof connectProvider>,
  receiver: ReturnType<typeof connectProvider>,
  token: string,
): Promise<number> {
  const seen = new Promise<number>((resolve) => {
    // Only the block typed into is read: the whole fragment's text would cost more than the wire.
    const onUpdate = () => {
      if (String(receiver.doc.getXmlFragment(FRAGMENT_NAME).get(1)?.toString()).includes(token)) {
        receiver.doc.off('update', onUpdate)
        resolve(performance.now())
      }
    }
    receiver.doc.on('update', onUpdate)
  })
  const first = sender.doc.getXmlFragment(FRAGMENT_NAME).get(1)
  const sent = performance.now()
  if (first instanceof Y.XmlElement && first.get(0) instanceof Y.XmlText) {
    const text = first.get(0) as InstanceType<typeof Y.XmlText>
    text.insert(text.length, token)
  } else {
    const paragraph = new Y.XmlElement('paragraph')
    paragraph.insert(0, [new Y.XmlText(token)])
    sender.doc.getXmlFragment(FRAGMENT_NAME).insert(1, [paragraph])
  }
  return (await seen) - sent
}

/** Time between keys: a quick typist's pace, so work a page defers (timers, idle callbacks) can land between them. */
const KEY_GAP_MS = 120

export async function measureWeb(fixture: Fixture, options: { quick: boolean }): Promise<Row[]> {
  if (!CHROMIUM) {
    process.stderr.write('the web editor: not measured (install Debian chromium)\n')
    return []
  }
  const rows: Row[] = []
  // The production store debounce and search refresh: the tests' settings re-index at every store.
  const fresh = await startFreshServer(
    {},
    { storeDebounceMs: 2_000, storeMaxDebounceMs: 10_000, searchRefreshMs: SEARCH_REFRESH_MS },
  )
  const browser = await launchChromium()
  const closers: Array<() => unknown> = []
  try {
    const { server } = fresh
    const { user, token } = await userWithToken(server, 'bench-web')
    await server.auth.accounts.setPassword(user.id, PASSWORD)
    const big = await createFixtureDocument(server, user.id, 'Bench', fixture.state)
    const lastText = lastParagraphText(fixture.state)

    // First paint of the 1 MiB document, interleaved with a bare provider syncing it (warm: it stays live),
    // and its first screen readable, interleaved with a bare TipTap editor opening it.
    const keeper = connectProvider(server.url, big.room, token)
    closers.push(() => keeper.destroy())
    await keeper.ready
    const bareServer = await serveBareEditor()
    closers.push(() => bareServer.stop())
    const bareUrl = (room: string) => bareServer.url(server.url.replace(/^http/, 'ws'), room, token)
    const firstText = firstParagraphText(fixture.state)
    const page = await signedInPage(browser, server, 'bench-web')
    await watchReadable(page, firstText)
    const opener = await browser.createBrowserContext()
    const bareOpen = await opener.newPage()
    await bareOpen.setViewport({ width: 1280, height: 900 })
    await watchReadable(bareOpen, firstText)
    const runs = options.quick ? 3 : 9
    const painted: number[] = []
    const synced: number[] = []
    const pageSynced: number[] = []
    const editorBuilt: number[] = []
    const readable: number[] = []
    const bareReadable: number[] = []
    for (let i = -1; i < runs; i++) {
      const opened = await openUntil(page, `${server.url}/d/${big.slug}`, lastText)
      const read = await readableAt(page)
      const started = performance.now()
      const bare = connectProvider(server.url, big.room, token)
      await bare.ready
      const floor = performance.now() - started
      bare.destroy()
      await openUntil(bareOpen, bareUrl(big.room), lastText)
      const bareRead = await readableAt(bareOpen)
      if (i < 0) continue // the first load also fetches and compiles the script
      painted.push(opened.ms)
      synced.push(floor)
      pageSynced.push(opened.synced)
      editorBuilt.push(opened.built - opened.synced)
      readable.push(read)
      bareReadable.push(bareRead)
    }
    const paint = summarize(painted)
    const floor = summarize(synced)
    const sized = { size: fixture.name, stateBytes: fixture.state.length }
    const editorOverFloor = (floorName: string) => ({
      over: 'web editor',
      under: floorName,
      name: 'editor / floor',
    })
    rows.push(
      medianRatioRow(
        { measure: 'web editor first paint (open /d/<slug> → last paragraph in the editor)', ...sized },
        { 'web editor': paint, 'bare provider synced (floor)': floor },
        editorOverFloor('bare provider synced (floor)'),
        {
          extra: {
            'p50 ms': paint.median,
            'floor p50 ms': floor.median,
            'page synced at p50 ms': summarize(pageSynced).median,
            'editor built in p50 ms': summarize(editorBuilt).median,
          },
        },
      ),
    )
    const firstScreen = summarize(readable)
    const bareFirst = summarize(bareReadable)
    rows.push(
      medianRatioRow(
        { measure: 'first screen readable (open /d/<slug> → first paragraph painted, visible)', ...sized },
        { 'web editor': firstScreen, 'bare TipTap editor (floor)': bareFirst },
        editorOverFloor('bare TipTap editor (floor)'),
        {
          extra: { 'p50 ms': firstScreen.median, 'floor p50 ms': bareFirst.median },
          target: { text: '≤ 1 s', met: firstScreen.median <= 1000 },
        },
      ),
    )
    await opener.close()
    await page.browserContext().close()

    // Keystroke to another browser, on a small document and on the 1 MiB one.
    const small = await server.services.documents.create(user.id, {
      title: 'Keystrokes',
      markdown: '## Notes\n\nA short paragraph to type into.\n',
    })
    if (small.kind === 'error') throw new Error(small.message)
    const samples = options.quick ? 10 : 40
    for (const target of [
      { name: '1 paragraph', slug: small.value.slug, room: small.value.room, text: 'A short paragraph' },
      { name: fixture.name, slug: big.slug, room: big.room, text: lastText },
    ]) {
      const a = await signedInPage(browser, server, 'bench-web')
      const b = await signedInPage(browser, server, 'bench-web')
      await openUntil(a, `${server.url}/d/${target.slug}`, target.text)
      await openUntil(b, `${server.url}/d/${target.slug}`, target.text)
      await watchTokens(b)
      await focusFirstParagraph(a)
      const pa = connectProvider(server.url, target.room, token)
      const pb = connectProvider(server.url, target.room, token)
      await Promise.all([pa.ready, pb.ready])
      const browsers: number[] = []
      const providers: number[] = []
      for (let i = -2; i < samples; i++) {
        const inBrowsers = await keystrokeInBrowsers(a, b, ` k${i + 2}x`)
        const inProviders = await keystrokeInProviders(pa, pb, ` p${i + 2}y`)
        if (i < 0) continue
        browsers.push(inBrowsers)
        providers.push(inProviders)
      }
      pa.destroy()
      pb.destroy()
      await a.browserContext().close()
      await b.browserContext().close()
      const ours = summarize(browsers)
      const bare = summarize(providers)
      browsers.sort((x, y) => x - y)
      rows.push({
        measure: 'keystroke to another browser (input event → text in the other page)',
        size: target.name,
        variants: { 'browser → browser': ours, 'bare provider → provider (floor)': bare },
        ratios: { 'browsers / floor': ours.median / bare.median },
        extra: { 'p50 ms': ours.median, 'p95 ms': percentile(browsers, 95), 'floor p50 ms': bare.median },
        target: { text: 'p95 < 100 ms on loopback', met: percentile(browsers, 95) < 100 },
      })
    }

    // Keystroke to paint in the typing page, beside a bare TipTap editor typing into a copy of the document.
    const copy = await createFixtureDocument(server, user.id, 'Bench copy', fixture.state)
    const typing = await signedInPage(browser, server, 'bench-web')
    await openUntil(typing, `${server.url}/d/${big.slug}`, lastText)
    const bareContext = await browser.createBrowserContext()
    const bare = await bareContext.newPage()
    await bare.setViewport({ width: 1280, height: 900 })
    await bare.goto(bareUrl(copy.room))
    await bare.waitForFunction(
      (t) => document.querySelector('.ProseMirror')?.textContent?.includes(t),
      { timeout: 60_000, polling: 'mutation' },
      lastText,
    )
    await focusFirstParagraph(typing)
    await focusFirstParagraph(bare)
    const inPage: number[] = []
    const inBare: number[] = []
    const keys = options.quick ? 20 : 60
    for (let i = -3; i < keys; i++) {
      const key = String.fromCharCode(97 + ((i + 3) % 26))
      const ours = await keystrokeToPaint(typing, key)
      await Bun.sleep(KEY_GAP_MS)
      const floorMs = await keystrokeToPaint(bare, key)
      await Bun.sleep(KEY_GAP_MS)
      if (i < 0) continue
      inPage.push(ours)
      inBare.push(floorMs)
    }
    await typing.browserContext().close()
    await bareContext.close()
    const typed = summarize(inPage)
    const typedFloor = summarize(inBare)
    inPage.sort((x, y) => x - y)
    inBare.sort((x, y) => x - y)
    const ratio = typed.median / typedFloor.median
    rows.push({
      measure: 'keystroke to paint in the typing page (keydown → the frame after it)',
      size: fixture.name,
      variants: { 'web editor': typed, 'bare TipTap editor (floor)': typedFloor },
      ratios: { 'editor / floor': ratio },
      extra: {
        'p50 ms': typed.median,
        'p95 ms': percentile(inPage, 95),
        'floor p50 ms': typedFloor.median,
        'floor p95 ms': percentile(inBare, 95),
      },
      target: { text: '≤ 1.5× the bare editor', met: ratio <= 1.5 },
    })
  } finally {
    for (const close of closers.reverse()) await close()
    await browser.close()
    await fresh.close()
  }
  return rows
}
