/**
 * resources/subscribe for a session that lives on (stdio): a subscriber to a document's resource, or to
 * one of its sections, is told `notifications/resources/updated` with that URI when a change of the
 * document is stored (the persistence extension's onStored), at most once per
 * RESOURCE_UPDATE_INTERVAL_MS per URI (a change during the pause is told when it ends). Access is the
 * tools' (documents.resolve) when subscribing and again before each notification: a subscriber who
 * lost access is dropped silently. Stateless HTTP has no session to tell later, so it does not offer
 * subscriptions (the capability is absent there).
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import {
  ErrorCode,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js'
import { MAX_SUBSCRIPTIONS, RESOURCE_UPDATE_INTERVAL_MS } from '../limits.ts'
import { refusalText } from '../tools/answer.ts'
import type { CallerContext } from '../tools/context.ts'
import { resolveForAgent } from '../tools/open-document.ts'
import { DOCUMENT_TEMPLATE, RESOURCE_NOT_FOUND, requestError } from './uris.ts'

/** Tells when a store of a document succeeded, with the state vector it covered (PersistenceExtension). */
export type StoreWatch = {
  onStored(room: string, listener: (vector: Map<number, number>) => void): () => void
}

const URI_PATTERN = /^collab:\/\/documents\/([^/?#]+)(?:\/sections\/([^/?#]+))?$/

type Subscription = {
  stop(): void
  timer?: ReturnType<typeof setTimeout>
  pending: boolean
  lastVector: string
}

/** Registers subscribe/unsubscribe on a session's server; the returned function ends every subscription. */
export function registerSubscriptions(
  server: McpServer,
  caller: CallerContext,
  watch: StoreWatch,
): () => void {
  const subscriptions = new Map<string, Subscription>()
  server.server.registerCapabilities({ resources: { subscribe: true } })

  const drop = (uri: string) => {
    const subscription = subscriptions.get(uri)
    if (!subscription) return
    subscription.stop()
    if (subscription.timer) clearTimeout(subscription.timer)
    subscriptions.delete(uri)
  }

  const tell = async (uri: string, slug: string) => {
    const still = await caller.documents.resolve(slug, caller.principal).catch(() => undefined)
    if (!still || still.kind === 'error') return drop(uri) // access gone (or the document deleted)
    await server.server.sendResourceUpdated({ uri }).catch(() => {})
  }

  const changed = (uri: string, slug: string, vector: Map<number, number>) => {
    const subscription = subscriptions.get(uri)
    if (!subscription) return
    const key = [...vector].map(([client, clock]) => `${client}:${clock}`).join(',')
    if (key === subscription.lastVector) return // a store that covered nothing new
    subscription.lastVector = key
    if (subscription.timer) {
      subscription.pending = true
      return
    }
    void tell(uri, slug)
    const pause = () => {
      subscription.timer = setTimeout(() => {
        subscription.timer = undefined
        if (!subscription.pending || !subscriptions.has(uri)) return
        subscription.pending = false
        void tell(uri, slug)
        pause()
      }, RESOURCE_UPDATE_INTERVAL_MS)
      subscription.timer.unref?.()
    }
    pause()
  }

  server.server.setRequestHandler(SubscribeRequestSchema, async (request) => {
    const { uri } = request.params
    const match = URI_PATTERN.exec(uri)
    if (!match) {
      throw requestError(
        ErrorCode.InvalidParams,
        `uri: not a resource of this server; subscribe to ${DOCUMENT_TEMPLATE} or …/sections/{section_id} (resources/templates/list).`,
      )
    }
    if (subscriptions.has(uri)) return {}
    if (subscriptions.size >= MAX_SUBSCRIPTIONS) {
      throw requestError(
        ErrorCode.InvalidParams,
        `uri: this session already has ${MAX_SUBSCRIPTIONS} subscriptions, the most it may hold; unsubscribe from one first.`,
      )
    }
    const slug = safeDecode(match[1]!)
    // The tools' words for a missing or unreadable document (resolveForAgent), as resources/read answers.
    const resolved = await resolveForAgent({ ...caller, tool: 'resources/subscribe' }, slug)
    if (resolved.kind === 'error') throw requestError(RESOURCE_NOT_FOUND, refusalText(resolved), { uri })
    const subscription: Subscription = { stop: () => {}, pending: false, lastVector: '' }
    subscriptions.set(uri, subscription)
    subscription.stop = watch.onStored(resolved.value.document.room, (vector) => changed(uri, slug, vector))
    return {}
  })

  server.server.setRequestHandler(UnsubscribeRequestSchema, (request) => {
    drop(request.params.uri)
    return {}
  })

  return () => {
    for (const uri of [...subscriptions.keys()]) drop(uri)
  }
}

function safeDecode(part: string): string {
  try {
    return decodeURIComponent(part)
  } catch {
    return part
  }
}
