/**
 * Yjs for the benchmarks, by package name (bench is a workspace package, bench/package.json): the same
 * module instance doc-schema and the server use (a second instance would break Yjs's constructor checks).
 */
import type { readOutline } from '@collab/doc-schema'
import * as Y from 'yjs'

export { Y }
export type YDoc = Y.Doc
export type YXmlFragment = Y.XmlFragment

/** A fragment as doc-schema's functions declare it (the same module instance, typed through its own path). */
export type Frag = Parameters<typeof readOutline>[0]
export const asFrag = (f: YXmlFragment) => f as unknown as Frag

/** A Yjs document holding `state` (a fixture's, or a stored one). */
export function docOf(state: Uint8Array): Y.Doc {
  const doc = new Y.Doc()
  Y.applyUpdate(doc, state)
  return doc
}
