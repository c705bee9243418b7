/**
 * The JSON body of an import (POST /api/documents as application/json: `{"title"?, "markdown",
 * "private"?}`), read on the documents' worker with the file it carries (worker/import.ts). Parsed on the
 * event loop, a body at the import limit (the file escaped into JSON: up to ~48 MB) held it for the parse,
 * then for the copy of the Markdown string posted to the worker; now its bytes are gathered in short turns
 * and transferred, as a `text/markdown` body's are.
 */
import { ok, type Result, refuse } from '@collab/doc-schema'
import { z } from 'zod'

const importBodySchema = z.object({
  title: z.string().optional(),
  markdown: z.string(),
  private: z.boolean().optional(),
})
export type ImportBody = z.infer<typeof importBodySchema>

/** What a refused JSON body is told (REST's other bodies are told the same). */
export const IMPORT_NOT_JSON = 'body: not JSON; send {"title"?, "markdown", "private"?}'

/** A schema's first issue, as REST names it: the field (`body` for the whole) and `field: message`. */
export function firstIssue(error: z.ZodError): { field: string; message: string } {
  const issue = error.issues[0]
  const field = issue?.path.map(String).join('.') || 'body'
  return { field, message: `${field}: ${issue?.message ?? 'invalid'}` }
}

/** An import's JSON body from its text or bytes (UTF-8, as `Request.json()` reads them), or its refusal. */
export function readImportBody(body: string | Uint8Array): Result<ImportBody> {
  let json: unknown
  try {
    json = JSON.parse(typeof body === 'string' ? body : new TextDecoder().decode(body))
  } catch {
    return refuse('invalid_input', IMPORT_NOT_JSON)
  }
  const parsed = importBodySchema.safeParse(json)
  if (parsed.success) return ok(parsed.data)
  const { field, message } = firstIssue(parsed.error)
  return refuse('invalid_input', message, field)
}
