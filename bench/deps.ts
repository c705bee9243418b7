/**
 * The bench folder is not a workspace package, so bare imports do not resolve from here. Yjs is loaded
 * through the server's install, by its ESM file: the same module instance doc-schema and the server use
 * (a second instance would break Yjs's constructor checks).
 */
// @ts-expect-error: the .mjs file has no declarations of its own; typed below from the package.
import * as YModule from '../apps/hocuspocus.server/node_modules/yjs/dist/yjs.mjs'

export const Y = YModule as typeof import('../apps/hocuspocus.server/node_modules/yjs')
export type YDoc = import('../apps/hocuspocus.server/node_modules/yjs').Doc
export type YXmlFragment = import('../apps/hocuspocus.server/node_modules/yjs').XmlFragment
