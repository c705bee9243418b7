/**
 * The bodies REST reads (api.ts): JSON bodies with the refusal a schema's first issue makes, and the body
 * of POST /documents, an import, sent as JSON or as the Markdown file itself and gathered chunk by chunk.
 */
import { MAX_IMPORT_BYTES } from '@collab/doc-schema'
import type { z } from 'zod'
import { firstIssue, type ImportBody } from '../documents/import-body.ts'
import { httpRefusal } from './refusal.ts'

/**
 * Largest body of POST /documents: a Markdown file at the import limit once JSON has escaped it (quotes,
 * backslashes and newlines take two bytes, so at most twice its size), plus the other fields.
 */
export const MAX_API_IMPORT_BODY_BYTES = 2 * MAX_IMPORT_BYTES + 64 * 1024

export async function jsonBody(request: Request): Promise<unknown> {
  if (!/^application\/json\b/i.test(request.headers.get('content-type') ?? '')) {
    throw httpRefusal('invalid_input', 'content-type: send application/json', { field: 'content-type' })
  }
  try {
    return await request.json()
  } catch {
    throw httpRefusal('invalid_input', 'body: not JSON')
  }
}

export function zodRefusal(error: z.ZodError) {
  const { field, message } = firstIssue(error)
  return httpRefusal('invalid_input', message, { field })
}

/**
 * A request's body as bytes, gathered chunk by chunk as they arrive into one buffer of its declared length:
 * `request.bytes()` (or `text()`) of a 20 MiB body took the event loop ~200 ms of CPU, read this way 60-80 ms
 * in many short turns (measured at load ~20 on 2 cores). Without a length (the body limit gathered a chunked
 * body already), or past it, the buffer grows.
 */
async function bodyBytes(request: Request): Promise<Uint8Array> {
  if (!request.body) return new Uint8Array(0)
  // Allocating the declared length up front is bounded only by the body limit in front of the one route
  // that reads a body this way (POST /documents, `bodyLimit` with MAX_API_IMPORT_BODY_BYTES): it refuses a
  // declared length over the limit before the body is read. Checked against Bun's server: it answers 400 to
  // any Content-Length that is not plain digits (`1e9`, `0x10`, `+3`, `3.0`, two of them) and to one sent
  // with Transfer-Encoding, so the limit's parseInt and this Number read the same value; a chunked body has
  // no length here (the limit counted and gathered it). Another caller needs such a limit first.
  const declared = Number(request.headers.get('content-length') ?? Number.NaN)
  let into = new Uint8Array(Number.isSafeInteger(declared) && declared >= 0 ? declared : 64 * 1024)
  let size = 0
  for await (const chunk of request.body as unknown as AsyncIterable<Uint8Array>) {
    if (size + chunk.byteLength > into.byteLength) {
      const grown = new Uint8Array(Math.max(size + chunk.byteLength, into.byteLength * 2))
      grown.set(into.subarray(0, size))
      into = grown
    }
    into.set(chunk, size)
    size += chunk.byteLength
  }
  return size === into.byteLength ? into : into.slice(0, size)
}

/**
 * The body of POST /documents: JSON {title?, markdown, private?}, or the Markdown itself (text/markdown or
 * text/plain) with `?title=` (the title, else the first heading's), `?name=` (the title when the file has
 * no heading: the web page sends the file's name) and `?private=true|false` in the query. Either way its
 * bytes go to the documents' worker as they came, transferred: a JSON body (`json`) is parsed and checked
 * there (documents/import-body.ts), so a large one never holds the event loop for its parse nor for a copy
 * of its Markdown string.
 */
export async function importInput(
  request: Request,
): Promise<Omit<ImportBody, 'markdown'> & { markdown: Uint8Array; fallbackTitle?: string; json?: true }> {
  const type = request.headers.get('content-type') ?? ''
  if (/^text\/(markdown|plain)\b/i.test(type)) {
    const query = new URL(request.url).searchParams
    const flag = query.get('private')
    if (flag !== null && flag !== 'true' && flag !== 'false')
      throw httpRefusal('invalid_input', `private: "${flag.slice(0, 20)}" is not true or false`, {
        field: 'private',
      })
    return {
      markdown: await bodyBytes(request),
      title: query.get('title') ?? undefined,
      fallbackTitle: query.get('name') || undefined,
      private: flag === null ? undefined : flag === 'true',
    }
  }
  if (!/^application\/json\b/i.test(type)) {
    throw httpRefusal(
      'invalid_input',
      'content-type: send application/json {"title"?, "markdown", "private"?} or text/markdown (?title=&name=&private=)',
      { field: 'content-type' },
    )
  }
  return { markdown: await bodyBytes(request), json: true }
}
