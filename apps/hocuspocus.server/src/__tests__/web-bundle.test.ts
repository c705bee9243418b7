/**
 * The web editor's bundle holds what a browser editor needs and none of the server's Markdown code. The
 * editor's entry (`@collab/doc-schema/editor`) reaches doc-schema's `lazy-libs.ts`, whose loaders
 * `require` markdown-it and mdast-util-to-markdown for the server; the bundler keeps them out only because
 * nothing the editor calls uses those loaders. Were one of them called on the editor's path, ~150 KB of
 * Markdown code would ship to every page: this reads the bundle the server serves (built, or read from
 * its cache) for a message each library writes into its own code.
 */
import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { HEADING_ID_ATTR } from '@collab/doc-schema'
import { buildWebBundle } from '../http/web-bundle.ts'

describe("the web editor's bundle", () => {
  test('has TipTap and the project schema, and neither markdown-it nor mdast-util-to-markdown', async () => {
    const dir = await buildWebBundle()
    const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as { script: string }
    const script = readFileSync(join(dir, manifest.script.replace('/assets/', '')), 'utf8')
    // The probe reads the real editor: the schema's heading id attribute and ProseMirror's classes.
    // (Booleans, not the script: a failure prints what failed, not 600 KB of minified code.)
    expect(script.includes(HEADING_ID_ATTR)).toBe(true)
    expect(script.includes('ProseMirror')).toBe(true)
    // markdown-it's constructor refuses an unknown preset with this message; mdast-util-to-markdown's
    // writer an unknown node with this one.
    expect({ markdownIt: script.includes('Wrong `markdown-it` preset') }).toEqual({ markdownIt: false })
    expect({ toMarkdown: script.includes('Cannot handle unknown node') }).toEqual({ toMarkdown: false })
  }, 60_000)
})
