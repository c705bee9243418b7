/** The one rule for a document title's length, for a new document and an imported one alike. */
import { MAX_TITLE_CHARS, type Refusal, refuse } from '@collab/doc-schema'

/**
 * A title longer than MAX_TITLE_CHARS refused, naming the field; `next` adds what the caller's transport
 * says to do instead. Undefined when the title fits.
 */
export function titleTooLong(title: string, next = ''): Refusal | undefined {
  if (title.length <= MAX_TITLE_CHARS) return undefined
  return refuse(
    'invalid_input',
    `title: ${title.length} characters; at most ${MAX_TITLE_CHARS}${next}`,
    'title',
  )
}
