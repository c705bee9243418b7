/**
 * The generated sections of a Markdown file: each sits between `<!-- generated:NAME start -->` and
 * `<!-- generated:NAME end -->`; everything outside the markers is hand-written and kept as it is.
 */
import type { Section } from './sections.ts'

export const startMarker = (name: string) => `<!-- generated:${name} start -->`
export const endMarker = (name: string) => `<!-- generated:${name} end -->`

const MARKED = /<!-- generated:([\w:-]+) start -->\n([\s\S]*?)\n?<!-- generated:\1 end -->/g

const block = (section: Section) =>
  `${startMarker(section.name)}\n${section.text}\n${endMarker(section.name)}`

/** The sections `doc` holds between markers, by name, as written there. */
export function markedSections(doc: string): Map<string, string> {
  const found = new Map<string, string>()
  for (const match of doc.matchAll(MARKED)) {
    if (found.has(match[1]!)) throw new Error(`the section ${match[1]} is marked twice`)
    found.set(match[1]!, match[2]!)
  }
  return found
}

/** The names of `sections` whose text in `doc` differs from what the code makes now (missing ones included). */
export function staleSections(doc: string, sections: readonly Section[]): string[] {
  const written = markedSections(doc)
  const stale = sections.filter((s) => written.get(s.name) !== s.text).map((s) => s.name)
  const unknown = [...written.keys()].filter((name) => !sections.some((s) => s.name === name))
  return [...stale, ...unknown]
}

/**
 * `doc` with every section written between its markers. A tool's section that has no markers yet (a new
 * tool) is added under a heading of its own after the section of the tool before it, with the prose
 * that follows that section; any other missing section, or markers no section owns (a removed tool),
 * is an error naming what to do, so no hand-written prose is dropped silently.
 */
export function fillSections(doc: string, sections: readonly Section[]): string {
  const written = markedSections(doc)
  const unknown = [...written.keys()].filter((name) => !sections.some((s) => s.name === name))
  if (unknown.length > 0) {
    throw new Error(
      `no code makes the generated section(s) ${unknown.join(', ')}: delete their markers and the prose about them`,
    )
  }
  let out = doc.replace(MARKED, (whole, name: string) => {
    const section = sections.find((s) => s.name === name)
    return section ? block(section) : whole
  })
  let previous: Section | undefined
  for (const section of sections) {
    if (!written.has(section.name)) {
      if (!section.name.startsWith('tool:') || !previous?.name.startsWith('tool:')) {
        throw new Error(`${section.name}: put its markers where it belongs (${startMarker(section.name)} …)`)
      }
      out = insertAfterToolProse(out, previous.name, section)
    }
    previous = section
  }
  return out
}

/** Inserts a new tool's heading and section before the next heading after the previous tool's section. */
function insertAfterToolProse(doc: string, previousName: string, section: Section): string {
  const afterPrevious = doc.indexOf(endMarker(previousName)) + endMarker(previousName).length
  const nextHeading = /\n(?=#{2,3} )/g
  nextHeading.lastIndex = afterPrevious
  const at = nextHeading.exec(doc)?.index ?? doc.length
  const name = section.name.slice('tool:'.length)
  return `${doc.slice(0, at)}\n### \`${name}\`\n\n${block(section)}\n${doc.slice(at)}`
}
