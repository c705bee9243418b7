/**
 * The one mapping from a handler's answer to an MCP tool result. A refusal is `isError` text that starts
 * with the field at fault, named as the caller sends it: the document model names its fields in camelCase
 * (fromBlock), tools take them in snake_case (from_block).
 */

import type { Refusal } from '@collab/doc-schema'
import { type CallToolResult, CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js'
import type { KeptAnswer, ToolAnswer } from './tool.ts'

/** fromBlock -> from_block. */
export const argumentName = (name: string): string =>
  name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`)

/** Names a caller can send (tool and argument names): their camelCase forms in a message become these. */
export type CallerNames = readonly string[]

/**
 * Rewrites, in a refusal's text, each camelCase form of a name the caller sends as that name; quoted
 * parts (ids, slugs the caller gave) are left as they are.
 */
export function callerWords(names: CallerNames): (text: string) => string {
  const byCamel = new Map<string, string>()
  for (const name of names) {
    const camel = name.replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase())
    if (camel !== name) byCamel.set(camel, name)
  }
  if (byCamel.size === 0) return (text) => text
  const pattern = new RegExp(`\\b(?:${[...byCamel.keys()].join('|')})\\b`, 'g')
  return (text) =>
    text
      .split(/("[^"]*")/)
      .map((part, i) => (i % 2 === 1 ? part : part.replace(pattern, (camel) => byCamel.get(camel)!)))
      .join('')
}

/** The text of a refusal: its leading `label:` is the field at fault when the refusal names one. */
export function refusalText(refusal: Refusal, words: (text: string) => string = (t) => t): string {
  const { field, message } = refusal
  const label = /^[\w-]+:/.exec(message)?.[0]
  const text =
    field !== undefined && label ? `${argumentName(field)}:${message.slice(label.length)}` : message
  return words(text)
}

/**
 * A kept answer's tool result and that result's JSON, made at its first call and shared by every later
 * one: the same object comes back from the tool while what it shows is unchanged (tools/tool.ts KeptAnswer).
 * This file is the one place that knows an answer is kept: the HTTP route asks resultJson() for any result.
 */
const keptResults = new WeakMap<KeptAnswer, CallToolResult>()
const keptJson = new WeakMap<CallToolResult, Uint8Array>()

export function toolResult(answer: ToolAnswer, words?: (text: string) => string): CallToolResult {
  if (typeof answer === 'string') return { content: [{ type: 'text', text: answer }] }
  if (answer.kind === 'kept') {
    let result = keptResults.get(answer)
    if (!result) {
      // Frozen: one object handed to many calls must not be changed by any of them.
      const part = Object.freeze({ type: 'text' as const, text: answer.text })
      result = Object.freeze({ content: Object.freeze([part]) }) as CallToolResult
      keptResults.set(answer, result)
      keptJson.set(result, checkedJson(result))
    }
    return result
  }
  if (answer.kind === 'linked') return { content: [{ type: 'text', text: answer.text }, ...answer.links] }
  return { content: [{ type: 'text', text: refusalText(answer, words) }], isError: true }
}

/**
 * The UTF-8 JSON a result is sent as: the result checked against the SDK's CallToolResultSchema (as its
 * Server checks every tool result before sending it), serialised. A kept answer's is made once
 * (serialising and encoding a 30 KB outline took longer than the rest of a warm call).
 */
export function resultJson(result: CallToolResult): Uint8Array {
  return keptJson.get(result) ?? checkedJson(result)
}

function checkedJson(result: CallToolResult): Uint8Array {
  const checked = CallToolResultSchema.safeParse(result)
  if (!checked.success)
    throw new Error(`a tool result outside CallToolResultSchema: ${checked.error.message}`)
  return new TextEncoder().encode(JSON.stringify(checked.data))
}
