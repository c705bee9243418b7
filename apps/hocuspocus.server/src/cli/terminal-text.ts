/**
 * What the CLI prints to a terminal: document text, titles, names and labels come from people and
 * apps, and a control character in them (ESC, BEL, NUL, a C1 control) would be run by the operator's
 * terminal (move the cursor, rewrite the screen, retitle the window, ring). When a stream is a
 * terminal, every control character but tab and newline is shown escaped as `\u001b`; written to a
 * file or a pipe (`--out FILE`, a redirect), the bytes stay exact. cli/main.ts applies this to all
 * output, so every command (doc export, doc list, user list, app list, token list, …) follows it.
 */

/** C0 controls but tab and newline, DEL, and the C1 controls (U+0080–U+009F; U+009B is a CSI). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g

/** The text with its control characters escaped, and how many there were. */
export function escapeControls(text: string): { text: string; escaped: number } {
  let escaped = 0
  const out = text.replace(CONTROL, (ch) => {
    escaped++
    return `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`
  })
  return { text: out, escaped }
}

/** The note on stderr when stdout's text was escaped for the terminal. */
export function escapedNote(count: number): string {
  return `note: ${count} control character${count === 1 ? ' was' : 's were'} shown escaped (as \\u001b and the like) because the output is a terminal; use --out FILE or redirect stdout for the exact text\n`
}
