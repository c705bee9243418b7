/**
 * The web editor's edges without a browser: what a signed-in browser's cookie may do at /api and at the
 * WebSocket, and what a page on another site cannot make it do (the cookie is attached whatever site
 * starts the request). Also the owner's controls and the chat of a heading, as the web editor calls them.
 */
import { describe, expect, test } from 'bun:test'
import { Browser, hiddenFields } from '@collab/test-support/browser'
import { DATABASE_KIND } from '@collab/test-support/database'
import { editorSocketUrl } from '@collab/test-support/provider'
import { eventually, userWithToken, useTestServer } from '@collab/test-support/server'
import { HocuspocusProvider, HocuspocusProviderWebsocket } from '@hocuspocus/provider'
import * as Y from 'yjs'
import { TOKEN_REVOKED_REASON } from '../collab/access-watch.ts'
import type { RunningServer } from '../server.ts'

const PASSWORD = 'correct horse battery staple'

async function signedIn(server: RunningServer, handle: string): Promise<Browser> {
  const made = await userWithToken(server, handle)
  expect((await server.auth.accounts.setPassword(made.user.id, PASSWORD)).kind).toBe('ok')
  const browser = new Browser(server.url)
  const page = await (await browser.fetch('/sign-in')).text()
  const response = await browser.post('/sign-in', { ...hiddenFields(page), handle, password: PASSWORD })
  expect(response.status).toBe(303)
  return browser
}

const cookieOf = (browser: Browser) => [...browser.cookies].map(([k, v]) => `${k}=${v}`).join('; ')

/** A provider whose WebSocket sends this cookie and this Origin, as a browser page would. */
function cookieProvider(server: RunningServer, room: string, cookie: string, origin: string) {
  const headers = { cookie, origin }
  class BrowserSocket extends WebSocket {
    constructor(url: string | URL) {
      // Bun's WebSocket takes headers (a browser sets Cookie and Origin itself).
      super(url, { headers } as unknown as string[])
    }
  }
  const doc = new Y.Doc()
  const socket = new HocuspocusProviderWebsocket({
    url: editorSocketUrl(server.url),
    maxAttempts: 1,
    WebSocketPolyfill: BrowserSocket,
  })
  let closeReason = ''
  let destroy = () => {}
  const outcome = new Promise<'synced' | 'refused'>((resolve) => {
    const provider = new HocuspocusProvider({
      websocketProvider: socket,
      name: room,
      document: doc,
      token: 'session',
      onSynced: () => resolve('synced'),
      onAuthenticationFailed: () => resolve('refused'),
      onClose: ({ event }) => {
        closeReason ||= event.reason
      },
    })
    provider.attach()
    destroy = () => {
      provider.destroy()
      socket.destroy()
    }
  })
  return { doc, outcome, closeReason: () => closeReason, destroy: () => destroy() }
}

describe(`the web editor's session at /api and the WebSocket (${DATABASE_KIND})`, () => {
  let server: RunningServer
  useTestServer((s) => {
    server = s
  })

  test('the page: signed out it sends the person to sign in and back; signed in it serves the app and its bundle', async () => {
    const stranger = new Browser(server.url)
    const away = await stranger.fetch('/d/some-doc')
    expect(away.status).toBe(303)
    expect(away.headers.get('location')).toBe('/sign-in?next=%2Fd%2Fsome-doc')

    const browser = await signedIn(server, 'page-owner')
    const page = await browser.fetch('/')
    expect(page.status).toBe(200)
    const csp = page.headers.get('content-security-policy') ?? ''
    expect(csp).toContain("script-src 'self'")
    expect(csp).toContain("frame-ancestors 'none'")
    const html = await page.text()
    const script = /<script type="module" src="([^"]+)"/.exec(html)?.[1]
    expect(script).toStartWith('/assets/')
    const bundle = await browser.fetch(script!, { headers: { 'accept-encoding': 'identity' } })
    expect(bundle.status).toBe(200)
    expect(bundle.headers.get('content-type')).toContain('javascript')
    expect(bundle.headers.get('cache-control')).toContain('immutable')
    // Bun's fetch option `decompress: false` keeps the body as sent.
    const zipped = await browser.fetch(script!, {
      headers: { 'accept-encoding': 'gzip' },
      decompress: false,
    } as RequestInit)
    expect(zipped.headers.get('content-encoding')).toBe('gzip')
    const sent = new Uint8Array(await zipped.arrayBuffer())
    const plain = new Uint8Array(await bundle.arrayBuffer())
    expect(sent.byteLength).toBeLessThan(plain.byteLength / 2)
    expect(Bun.gunzipSync(sent)).toEqual(plain)
    expect((await browser.fetch('/assets/nothing-here.js')).status).toBe(404)
  })

  test('a cookie reads at /api, and changes only from our own origin (another site cannot post as the person)', async () => {
    const browser = await signedIn(server, 'carol')
    const listed = await browser.fetch('/api/documents')
    expect(listed.status).toBe(200)
    const create = (origin: string) =>
      browser.fetch('/api/documents', {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin },
        body: JSON.stringify({ title: 'From the page', markdown: '' }),
      })
    const foreign = await create('https://evil.example')
    expect(foreign.status).toBe(403)
    expect(((await foreign.json()) as { message: string }).message).toContain('Origin')
    const own = await create(new URL(server.url).origin)
    expect(own.status).toBe(201)
    // Without a cookie, the same request is unauthenticated.
    expect((await new Browser(server.url).fetch('/api/documents')).status).toBe(401)
  })

  test('the WebSocket takes the cookie from our own origin only; signing out closes the socket', async () => {
    const browser = await signedIn(server, 'dave')
    const dave = await server.services.users.byHandle('dave')
    if (dave.kind === 'error') throw new Error(dave.message)
    const created = await server.services.documents.create(dave.value.id, { title: 'Socket test' })
    if (created.kind === 'error') throw new Error(created.message)
    const room = created.value.room
    const cookie = cookieOf(browser)

    const foreign = cookieProvider(server, room, cookie, 'https://evil.example')
    expect(await foreign.outcome).toBe('refused')
    foreign.destroy()

    const own = cookieProvider(server, room, cookie, new URL(server.url).origin)
    expect(await own.outcome).toBe('synced')
    expect(own.doc.getXmlFragment('default').toString()).toContain('Socket test')

    const page = await (await browser.fetch('/apps')).text()
    const out = await browser.post('/sign-out', hiddenFields(page))
    expect(out.status).toBe(303)
    await eventually(
      () => expect(own.closeReason()).toBe(TOKEN_REVOKED_REASON),
      10_000,
      'the socket to close',
    )
    own.destroy()
  })

  test('the owner shares, publishes and locks; an editor may not; chat posts need a heading and write access', async () => {
    const owner = await signedIn(server, 'erin')
    const editor = await signedIn(server, 'frank')
    const viewer = await signedIn(server, 'gina')
    const origin = new URL(server.url).origin
    const send = (browser: Browser, method: string, path: string, body: unknown) =>
      browser.fetch(path, {
        method,
        headers: { 'content-type': 'application/json', origin },
        body: JSON.stringify(body),
      })
    const made = await send(owner, 'POST', '/api/documents', { markdown: '# Roadmap\n\n## Q1\n\nPlans.\n' })
    expect(made.status).toBe(201)
    const { slug } = (await made.json()) as { slug: string }

    expect(
      (await send(owner, 'PUT', `/api/documents/${slug}/members/frank`, { role: 'editor' })).status,
    ).toBe(200)
    expect((await send(owner, 'PUT', `/api/documents/${slug}/members/gina`, { role: 'viewer' })).status).toBe(
      200,
    )
    const unknown = await send(owner, 'PUT', `/api/documents/${slug}/members/nobody-here`, { role: 'viewer' })
    expect(unknown.status).toBe(404)
    const members = (await (await owner.fetch(`/api/documents/${slug}/members`)).json()) as {
      members: Array<{ handle: string; role: string }>
    }
    expect(members.members).toEqual([
      { handle: 'frank', role: 'editor' },
      { handle: 'gina', role: 'viewer' },
    ])
    // An editor can write the document but not change who may.
    expect((await send(editor, 'PATCH', `/api/documents/${slug}`, { private: false })).status).toBe(403)
    const published = await send(owner, 'PATCH', `/api/documents/${slug}`, { private: false, readOnly: true })
    expect(published.status).toBe(200)
    expect(await published.json()).toMatchObject({ private: false, readOnly: true })
    const info = (await (await editor.fetch(`/api/documents/${slug}`)).json()) as { canWrite: boolean }
    expect(info.canWrite).toBe(false) // locked: read-only for editors
    expect((await send(owner, 'PATCH', `/api/documents/${slug}`, { readOnly: false })).status).toBe(200)

    const outline = await server.services.documents.loadStored(
      ((await (await owner.fetch(`/api/documents/${slug}`)).json()) as { room: string }).room,
    )
    expect(outline).not.toBeNull()
    const doc = new Y.Doc()
    for (const part of [outline!.snapshot, ...outline!.updates]) if (part) Y.applyUpdate(doc, part)
    const q1 = doc
      .getXmlFragment('default')
      .toArray()
      .map((node) => (node instanceof Y.XmlElement ? node.getAttribute('toc-id') : undefined))
      .filter(Boolean)[1] as string

    const posted = await send(editor, 'POST', `/api/documents/${slug}/chat/${q1}`, {
      text: 'Can we @ship it?',
    })
    expect(posted.status).toBe(201)
    expect(await posted.json()).toMatchObject({ seq: 1, author: 'frank', text: 'Can we ship it?' })
    expect((await send(viewer, 'POST', `/api/documents/${slug}/chat/${q1}`, { text: 'me too' })).status).toBe(
      403,
    )
    expect(
      (await send(editor, 'POST', `/api/documents/${slug}/chat/AAAAAAAAAAAAAAAA`, { text: 'hi' })).status,
    ).toBe(404)
    const thread = (await (await viewer.fetch(`/api/documents/${slug}/chat/${q1}`)).json()) as {
      messages: Array<{ author: string; text: string }>
    }
    expect(thread.messages.map((m) => `${m.author}: ${m.text}`)).toEqual(['frank: Can we ship it?'])
    // The same room an agent reads with read_chat_thread.
    const room = await server.services.chat.findRoom(outline!.documentId, q1)
    expect(room?.messageCount).toBe(1)
  })
})
