/** How a generated section of the reference is written: its name and text, Markdown's inline code and tables. */

export type Section = { name: string; text: string }

/** A placeholder where a note's text varies: `{name}` in the template, passed where the code passes a value. */
export const slot = (name: string) => `{${name}}` as never

/** Markdown inline code of any text (a text holding backticks gets a longer fence). */
export function code(text: string): string {
  const fence = text.includes('`') ? '``' : '`'
  const pad = text.startsWith('`') || text.endsWith('`') ? ' ' : ''
  return `${fence}${pad}${text}${pad}${fence}`
}

/** A table cell: pipes escaped, on one line. */
const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ')

const row = (cells: readonly string[]) => `| ${cells.map(cell).join(' | ')} |`

export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  return [row(header), row(header.map(() => '---')), ...rows.map(row)].join('\n')
}

export const number = (n: number) => n.toLocaleString('en-US')
