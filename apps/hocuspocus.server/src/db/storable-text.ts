/** What PostgreSQL's text columns and parameters accept: a detail of the database, applied by every service. */

/** A UTF-16 code unit of a surrogate pair standing alone (not half of a valid pair). */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g

/**
 * Text PostgreSQL can store: lone surrogates become U+FFFD and NUL is dropped (a `text` column refuses
 * both, and a refused store would be retried forever). Found by the input fuzzing suite: a title, a chat
 * message or document text holding either made the write fail. Yjs state (bytes) is stored unchanged.
 * The services (documents, search, chat, users, tokens) put every string they are given through this
 * (or check its shape) before it reaches SQL, so transports pass what they received as it is.
 */
export function storableText(text: string): string {
  const wellFormed = text.replace(LONE_SURROGATE, '\ufffd')
  return wellFormed.includes('\u0000') ? wellFormed.replaceAll('\u0000', '') : wellFormed
}

/**
 * What JSON.stringify writes for a NUL (`\u0000`) or a lone surrogate (`\ud800`…`\udfff`): jsonb refuses
 * both (22P05), and valid text never produces them (pairs are written as themselves). Found by hand: one
 * NUL typed into a heading made every later store of the document fail, through the stored outline.
 */
const UNSTORABLE_ESCAPE = /\\u(?:0000|d[89a-f])/i

/**
 * JSON text a jsonb column takes: every string in it, keys included, through `storableText`. For JSON
 * built from content (the outline: titles, section ids). Clean JSON (nearly always) is stringified once.
 */
export function storableJSON(value: unknown): string {
  const json = JSON.stringify(value)
  // Also true for text that merely shows such an escape (a title reading "\u0000"): harmless, slower path.
  if (json === undefined || !UNSTORABLE_ESCAPE.test(json)) return json
  return JSON.stringify(value, (_key, item: unknown) => {
    if (typeof item === 'string') return storableText(item)
    if (item === null || typeof item !== 'object' || Array.isArray(item)) return item
    const keys = Object.keys(item)
    if (keys.every((key) => storableText(key) === key)) return item
    const record = item as Record<string, unknown>
    return Object.fromEntries(keys.map((key) => [storableText(key), record[key]]))
  })
}
