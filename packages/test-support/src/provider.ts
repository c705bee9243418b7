/** A real @hocuspocus/provider client over a real WebSocket. */
import { ALL_EDITOR_TYPES, EDITOR_TYPES_PARAM } from '@collab/doc-schema'
import { HocuspocusProvider, HocuspocusProviderWebsocket } from '@hocuspocus/provider'
import * as Y from 'yjs'

export type TestProvider = {
  provider: HocuspocusProvider
  doc: Y.Doc
  /** Resolves when synced; rejects when authentication fails. */
  ready: Promise<void>
  destroy(): void
}

/** The WebSocket URL of a server, declaring the editor's types (`null`: declares nothing, as StarterKit). */
export function editorSocketUrl(serverUrl: string, types: string | null = ALL_EDITOR_TYPES): string {
  const url = new URL(serverUrl.replace(/^http/, 'ws'))
  if (types !== null) url.searchParams.set(EDITOR_TYPES_PARAM, types)
  return url.toString()
}

/**
 * A provider for `room`. `types` is what it declares it knows (docs/server.md, Editor input): by default
 * the project's whole schema, as the web editor does, so it may delete any content. `headers` go with the
 * WebSocket upgrade request (Bun's WebSocket takes them), as a browser sends its session cookie and Origin.
 * `socket` replaces the WebSocket class (a test's view of, or hold on, what crosses the wire).
 */
export function connectProvider(
  serverUrl: string,
  room: string,
  token: string,
  {
    types = ALL_EDITOR_TYPES,
    headers,
    socket: socketClass,
  }: { types?: string | null; headers?: Record<string, string>; socket?: typeof WebSocket } = {},
): TestProvider {
  const doc = new Y.Doc()
  class WithHeaders extends WebSocket {
    constructor(url: string | URL) {
      super(url, { headers } as unknown as string[])
    }
  }
  const socket = new HocuspocusProviderWebsocket({
    url: editorSocketUrl(serverUrl, types),
    maxAttempts: 1,
    ...(socketClass ? { WebSocketPolyfill: socketClass } : headers ? { WebSocketPolyfill: WithHeaders } : {}),
  })
  let resolve!: () => void
  let reject!: (e: Error) => void
  const ready = new Promise<void>((res, rej) => {
    resolve = res
    reject = rej
  })
  const provider = new HocuspocusProvider({
    websocketProvider: socket,
    name: room,
    document: doc,
    token,
    onSynced: () => resolve(),
    onAuthenticationFailed: ({ reason }) => reject(new Error(`authentication failed: ${reason}`)),
  })
  provider.attach()
  return {
    provider,
    doc,
    ready,
    destroy() {
      provider.destroy()
      socket.destroy()
    },
  }
}
