/**
 * What the Markdown tests share: a person's file imported and exported again as `doc export` writes it,
 * a corpus file imported into a live fragment, and inline content compared as runs of text and marks.
 */
import { readFileSync } from 'node:fs'
import * as Y from 'yjs'
import { importedDocumentUpdate } from '../create-document.ts'
import type { DocNode } from '../doc-json.ts'
import { FRAGMENT_NAME } from '../limits.ts'
import { documentToMarkdown } from '../markdown/document-to-markdown.ts'
import { importMarkdown } from '../markdown/import-markdown.ts'
import { expectOk } from './fixtures.ts'

/** `importMarkdown` of a file named "file-name", or a refusal thrown. */
export function imported(markdown: string, title?: string) {
  const result = importMarkdown(markdown, { title, fallbackTitle: 'file-name' })
  if (result.kind === 'error') throw new Error(result.message)
  return result.value
}

/** What `doc export` writes: the stored document (title heading included) as Markdown, images as source. */
export function exported(markdown: string, title?: string): string {
  const update = importedDocumentUpdate(imported(markdown, title))
  if (update.kind === 'error') throw new Error(update.message)
  const doc = new Y.Doc()
  Y.applyUpdate(doc, update.value)
  const text = documentToMarkdown(doc.getXmlFragment(FRAGMENT_NAME), { media: 'source' })
  doc.destroy()
  return text
}

/** A corpus file imported as a document (its title "File" when it has none): the doc and its fragment. */
export function importedFile(file: string): { doc: Y.Doc; fragment: Y.XmlFragment } {
  const doc = new Y.Doc()
  const made = expectOk(importMarkdown(readFileSync(file, 'utf8'), { fallbackTitle: 'File' }))
  Y.applyUpdate(doc, expectOk(importedDocumentUpdate(made)))
  return { doc, fragment: doc.getXmlFragment(FRAGMENT_NAME) }
}

/** Inline content as [text, marks] pairs, adjacent runs with equal marks merged, hard breaks as '\n'. */
export function runsOf(nodes: DocNode[]): [string, string][] {
  const out: [string, string][] = []
  for (const node of nodes) {
    const text = node.type === 'hardBreak' ? '\n' : (node.text ?? '')
    const marks = JSON.stringify((node.marks ?? []).map((mark) => [mark.type, mark.attrs?.href ?? null]))
    const last = out.at(-1)
    if (last && last[1] === marks) last[0] += text
    else out.push([text, marks])
  }
  return out
}

/** The inline content of the first textblock in a block (paragraph, heading, item, cell). */
export function firstInline(block: DocNode | undefined): DocNode[] {
  if (!block) return []
  if (block.type === 'paragraph' || block.type === 'heading') return block.content ?? []
  return firstInline(block.content?.[0])
}
