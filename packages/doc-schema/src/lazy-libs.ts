/**
 * The document model's heavy libraries, loaded at their first use instead of at import. A server that
 * has started and serves no one yet checks no editor content, parses no Markdown and writes none, but
 * loaded at import they are held from the start: TipTap's extensions and schema (~8 MB resident with
 * ProseMirror's model), markdown-it with its tables of HTML entities (~5 MB), mdast-util-to-markdown with
 * its GFM extension (~2 MB). Bun's `require` loads an ES module synchronously, so every caller stays
 * synchronous: the first one pays the load, once per process (and the same module instance as an
 * `import` of it elsewhere). The browser editor imports TipTap itself (editor.ts), unchanged by this.
 */
import type { Schema } from '@tiptap/pm/model'

type Extensions = typeof import('./extensions.ts')
type MarkdownIt = typeof import('markdown-it').default
type ToMarkdown = typeof import('mdast-util-to-markdown')
export type ToMarkdownLib = ToMarkdown
type Gfm = typeof import('mdast-util-gfm')
type Model = typeof import('@tiptap/pm/model')

let extensionsModule: Extensions | undefined
let markdownItClass: MarkdownIt | undefined
let toMarkdownModule: ToMarkdown | undefined
let gfmModule: Gfm | undefined
let modelModule: Model | undefined

/** The project's TipTap schema (extensions.ts), loading TipTap at the first call. */
export function editorSchema(): Schema {
  extensionsModule ??= require('./extensions.ts') as Extensions
  return extensionsModule.schema
}

/** markdown-it's class. Its ES module entry: the same instance as `markdown-it/lib/…` imports use. */
export function markdownIt(): MarkdownIt {
  markdownItClass ??= (require('markdown-it/index.mjs') as { default: MarkdownIt }).default
  return markdownItClass
}

/** mdast-util-to-markdown: `toMarkdown` and its default handlers. */
export function toMarkdownLib(): ToMarkdown {
  toMarkdownModule ??= require('mdast-util-to-markdown') as ToMarkdown
  return toMarkdownModule
}

/** mdast-util-gfm: the GFM extensions for mdast-util-to-markdown (tables, task items, strikethrough). */
export function gfmLib(): Gfm {
  gfmModule ??= require('mdast-util-gfm') as Gfm
  return gfmModule
}

/** ProseMirror's model (`Fragment`, `DOMSerializer`), as TipTap re-exports it. */
export function prosemirrorModel(): Model {
  modelModule ??= require('@tiptap/pm/model') as Model
  return modelModule
}

type MarkdownUtils = typeof import('markdown-it/lib/common/utils.mjs')
let utilsModule: MarkdownUtils | undefined

/** markdown-it's helpers (`unescapeAll`): most of markdown-it's weight is their entity tables. */
export function markdownItUtils(): MarkdownUtils {
  utilsModule ??= require('markdown-it/lib/common/utils.mjs') as MarkdownUtils
  return utilsModule
}
