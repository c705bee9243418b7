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
