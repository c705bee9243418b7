/**
 * The naive path a typical Hocuspocus integration takes (`TiptapTransformer.fromYdoc`): the whole fragment
 * to ProseMirror JSON first, then a walk of the JSON. Each function answers the same thing ours does
 * (ids, titles, a content rev per section; numbered Markdown blocks) so the ratio compares equal work.
 */
import { type DocNode, fragmentToJSON, HEADING_ID_ATTR } from '@collab/doc-schema'
import { blocksToMarkdown } from '../../packages/doc-schema/src/markdown/serialize-markdown.ts'
import { ContentHash } from '../../packages/doc-schema/src/sections/content-hash.ts'
import type { YXmlFragment } from '../deps.ts'

const text = (node: DocNode): string =>
  node.type === 'text' ? (node.text ?? '') : (node.content ?? []).map(text).join('')

type NaiveSection = { id: string; level: number; title: string; rev: string; blocks: DocNode[] }

function sections(fragment: YXmlFragment): NaiveSection[] {
  const doc = fragmentToJSON(fragment as never)
  const out: NaiveSection[] = []
  let current: NaiveSection | undefined
  let hash = new ContentHash()
  const close = () => {
    if (current) current.rev = hash.digest().slice(0, 12)
  }
  for (const node of doc.content ?? []) {
    if (node.type === 'heading') {
      close()
      hash = new ContentHash().update(JSON.stringify(node.content ?? []))
      current = {
        id: String(node.attrs?.[HEADING_ID_ATTR] ?? ''),
        level: Number(node.attrs?.level ?? 1),
        title: text(node).replace(/\s+/g, ' ').trim(),
        rev: '',
        blocks: [],
      }
      out.push(current)
    } else if (current) {
      current.blocks.push(node)
      hash.update(JSON.stringify(node))
    }
  }
  close()
  return out
}

/** Outline lines (indent by depth, id, rev) via whole-document JSON. */
export function naiveOutlineLines(fragment: YXmlFragment): string[] {
  const stack: number[] = []
  return sections(fragment).map((s) => {
    while (stack.length > 0 && stack.at(-1)! >= s.level) stack.pop()
    const line = `${'  '.repeat(stack.length)}${s.title} [section_id: ${s.id}, rev: ${s.rev}]`
    stack.push(s.level)
    return line
  })
}

/** One section's numbered Markdown blocks via whole-document JSON. */
export function naiveSection(fragment: YXmlFragment, sectionId: string): string {
  const section = sections(fragment).find((s) => s.id === sectionId)
  if (!section) throw new Error(`no section ${sectionId}`)
  const parts = section.blocks.map(
    (block, i) => `[${i + 1}] ${blocksToMarkdown([block], { media: 'placeholder' })}`,
  )
  return [`${'#'.repeat(section.level)} ${section.title}`, `rev: ${section.rev}`, ...parts].join('\n\n')
}

/** A section and its subsections (later sections with deeper headings), each as naiveSection shows it. */
export function naiveChapter(fragment: YXmlFragment, sectionId: string): string {
  const all = sections(fragment)
  const start = all.findIndex((s) => s.id === sectionId)
  if (start < 0) throw new Error(`no section ${sectionId}`)
  const level = all[start]!.level
  let end = start + 1
  while (end < all.length && all[end]!.level > level) end++
  return all
    .slice(start, end)
    .map((section) => {
      const parts = section.blocks.map(
        (block, i) => `[${i + 1}] ${blocksToMarkdown([block], { media: 'placeholder' })}`,
      )
      return [`${'#'.repeat(section.level)} ${section.title}`, `rev: ${section.rev}`, ...parts].join('\n\n')
    })
    .join('\n\n')
}

/** The whole document as Markdown via JSON, cut to the cap on a line boundary. */
export function naiveWholeRead(fragment: YXmlFragment, cap: number): string {
  const markdown = blocksToMarkdown(fragmentToJSON(fragment as never).content ?? [])
  if (markdown.length <= cap) return markdown
  const cut = markdown.lastIndexOf('\n', cap)
  return markdown.slice(0, cut < 0 ? cap : cut)
}
