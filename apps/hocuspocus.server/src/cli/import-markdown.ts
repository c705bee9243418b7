/**
 * Title and body of an imported Markdown file: `--title` wins; otherwise a leading `# Heading` becomes
 * the title (and leaves the body, where a level-1 heading is not allowed); otherwise the file name.
 */
import { basename, extname } from 'node:path'

export function titleAndBody(markdown: string, title: string | undefined, fileName: string) {
  const text = markdown.replace(/^\uFEFF/, '')
  const match = /^\s*#[ \t]+(.+?)[ \t]*#*[ \t]*(?:\r?\n|$)/.exec(text)
  if (title?.trim()) return { title: title.trim(), body: text }
  if (match) return { title: match[1]!.trim(), body: text.slice(match[0].length) }
  return { title: basename(fileName, extname(fileName)) || 'Untitled', body: text }
}
