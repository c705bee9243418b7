/**
 * Yjs for the benchmarks, by package name (bench is a workspace package, bench/package.json): the same
 * module instance doc-schema and the server use (a second instance would break Yjs's constructor checks).
 */
import * as Y from 'yjs'

export { Y }
export type YDoc = Y.Doc
export type YXmlFragment = Y.XmlFragment
