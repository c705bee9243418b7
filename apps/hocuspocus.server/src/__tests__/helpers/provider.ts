/** A real @hocuspocus/provider client over a real WebSocket. */
import { HocuspocusProvider, HocuspocusProviderWebsocket } from '@hocuspocus/provider'
import * as Y from 'yjs'

export type TestProvider = {
  provider: HocuspocusProvider
  doc: Y.Doc
  /** Resolves when synced; rejects when authentication fails. */
  ready: Promise<void>
  destroy(): void
}

export function connectProvider(serverUrl: string, room: string, token: string): TestProvider {
  const doc = new Y.Doc()
  const socket = new HocuspocusProviderWebsocket({ url: serverUrl.replace(/^http/, 'ws'), maxAttempts: 1 })
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
