/**
 * Named constants with their values and the first sentences of their doc comments, read from the source
 * file that declares or re-exports them (the TypeScript parser, no evaluation of comments), for the tables
 * of docs/mcp/reference.md.
 */
import { readFileSync } from 'node:fs'
import ts from 'typescript'

export type NamedConstant = { name: string; value: number; comment: string; file: string }

/** Longest comment a table cell shows: whole sentences up to this many characters (at least one). */
const MAX_COMMENT_CHARS = 200

/** The doc comment right before `node`, as one line of text without the comment's markers. */
function docComment(source: ts.SourceFile, node: ts.Node): string | undefined {
  const ranges = ts.getLeadingCommentRanges(source.text, node.getFullStart()) ?? []
  const doc = ranges.filter((r) => source.text.startsWith('/**', r.pos)).at(-1)
  if (!doc) return undefined
  return source.text
    .slice(doc.pos + 3, doc.end - 2)
    .split('\n')
    .map((line) => line.replace(/^\s*\*\s?/, '').trim())
    .join(' ')
    .replace(/^\.\.\.\s*|\s*\.\.\.$/g, '')
    .trim()
}

/** Whole sentences of `text` up to MAX_COMMENT_CHARS (the first one even when longer). */
function leadSentences(text: string): string {
  const sentences = text.split(/(?<=[.;:]) (?=[A-Z(`"])/)
  let kept = sentences[0]!
  for (const next of sentences.slice(1)) {
    if (kept.length + 1 + next.length > MAX_COMMENT_CHARS) break
    kept = `${kept} ${next}`
  }
  return kept
}

/** The names a statement declares, or re-exports (those only when asked for by name). */
function namesOf(statement: ts.Statement, only: readonly string[] | undefined): string[] {
  if (ts.isVariableStatement(statement)) {
    return statement.declarationList.declarations.flatMap((d) =>
      ts.isIdentifier(d.name) ? [d.name.text] : [],
    )
  }
  if (
    ts.isExportDeclaration(statement) &&
    statement.exportClause &&
    ts.isNamedExports(statement.exportClause)
  ) {
    return statement.exportClause.elements.map((e) => e.name.text).filter((name) => only?.includes(name))
  }
  return []
}

/**
 * Each numeric constant `file` declares (its loaded module is `module`), in the file's order, with its
 * comment; `only` keeps those names (and may name re-exports). A constant without a comment of its own shares the comment
 * of the statement before it (a pair declared under one comment).
 */
export function namedConstants(
  file: string,
  module: Record<string, unknown>,
  only?: readonly string[],
): NamedConstant[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true)
  const found: NamedConstant[] = []
  let lastComment = ''
  for (const statement of source.statements) {
    const names = namesOf(statement, only)
    if (names.length === 0) continue
    const comment = docComment(source, statement) ?? lastComment
    lastComment = comment
    for (const name of names) {
      const value = module[name]
      if (typeof value !== 'number') continue
      if (only && !only.includes(name)) continue
      found.push({ name, value, comment: leadSentences(comment), file })
    }
  }
  const missing = (only ?? []).filter((name) => !found.some((c) => c.name === name))
  if (missing.length > 0) throw new Error(`${file} declares no numeric constant ${missing.join(', ')}`)
  return found
}
