/**
 * The log check shared by `log-hygiene.test.ts` and the soak (`soak.ts`): no token (nor its secret part)
 * and no document or chat text in anything a server process printed on stderr. Findings name what leaked
 * and where, never the leaked value itself, so the report can be printed and kept.
 */

/** What must never appear in a log line: an API token, or a phrase that only document or chat text holds. */
export type LogSecret =
  | { kind: 'token'; label: string; value: string }
  | { kind: 'text'; label: string; value: string }

/** The part of an API token (`ctk_<id>_<secret>`) that grants access: everything after the id. */
export function tokenSecretPart(token: string): string {
  return token.split('_').slice(2).join('_')
}

/**
 * One finding per secret that occurs in `logs`: its label, the kind of leak and the first line (1-based)
 * holding it. An empty result means the logs are clean. A token is also looked for by its secret part.
 */
export function findLogLeaks(logs: string, secrets: LogSecret[]): string[] {
  const findings: string[] = []
  const lineOf = (index: number) => logs.slice(0, index).split('\n').length
  for (const secret of secrets) {
    const needles = secret.kind === 'token' ? [secret.value, tokenSecretPart(secret.value)] : [secret.value]
    for (const needle of needles) {
      if (needle.length < 8) throw new Error(`log check: "${secret.label}" is too short to search for`)
      const at = logs.indexOf(needle)
      if (at < 0) continue
      const what = secret.kind === 'token' ? (needle === secret.value ? 'token' : 'token secret') : 'text'
      findings.push(`${what} "${secret.label}" on log line ${lineOf(at)}`)
      break
    }
  }
  return findings
}
