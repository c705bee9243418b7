/**
 * The import worker's thread (a Bun Worker, started by pool.ts): builds one Markdown file at a time
 * (build.ts) and posts the result back, the state's buffer transferred rather than copied. Messages:
 * `{ id, input, maxTextChars }` → `{ id, result }`.
 */

import type { Result } from '../../errors.ts'
import { type BuiltImport, buildImport, type ImportInput } from './build.ts'

declare const self: Worker

export type ImportJob = { id: number; input: ImportInput; maxTextChars: number }
export type ImportReply = { id: number; result: Result<BuiltImport> } | { id: number; crashed: string }

self.onmessage = (event: MessageEvent<ImportJob>) => {
  const { id, input, maxTextChars } = event.data
  let reply: ImportReply
  try {
    reply = { id, result: buildImport(input, maxTextChars) }
  } catch (error) {
    reply = { id, crashed: error instanceof Error ? error.message : String(error) }
  }
  const state = 'result' in reply && reply.result.kind === 'ok' ? reply.result.value.state : undefined
  self.postMessage(reply, state ? [state.buffer as ArrayBuffer] : [])
}
