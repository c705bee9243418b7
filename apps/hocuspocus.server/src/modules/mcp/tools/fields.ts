/** Argument fields several tools share: one shape for each, the description says what this tool does with it. */
import { z } from 'zod'
import { MAX_READ_CHARS } from '../limits.ts'

/** Longest slug accepted (slugs are far shorter; bounds the lookup). */
const MAX_SLUG_CHARS = 200

/** Longest section id or rev accepted (both are short server-made strings). */
const MAX_SECTION_REF_CHARS = 100

export const slugField = (description = 'The document slug, as find_documents lists it.') =>
  z.string().min(1).max(MAX_SLUG_CHARS).describe(description)

export const sectionIdField = (description: string) =>
  z.string().min(1).max(MAX_SECTION_REF_CHARS).describe(description)

export const optionalSectionIdField = (description: string) =>
  z.string().min(1).max(MAX_SECTION_REF_CHARS).optional().describe(description)

export const revField = () =>
  z
    .string()
    .min(1)
    .max(MAX_SECTION_REF_CHARS)
    .describe(
      'The section rev a read of that section (read_document with section_id) or your last edit of it printed; a stale rev is refused.',
    )

/** How many `things` one call lists: 1 to `max`, `byDefault` when left out. */
export const listLimitField = (things: string, max: number, byDefault: number) =>
  z
    .number()
    .int()
    .min(1)
    .max(max)
    .optional()
    .describe(`${things} to show, 1 to ${max} (default ${byDefault}).`)

/** `start` of a line list: `item` is what one line is, `list` what a cut one is called. */
export const startField = (item: string, list: string) =>
  z
    .number()
    .int()
    .min(1)
    .optional()
    .describe(`1-based index of the first ${item} to show (default 1); a cut ${list} names the next one.`)

/** `max_chars`: the character budget of `what` ("this read", "this answer"), at most MAX_READ_CHARS. */
export const maxCharsField = (what: string) =>
  z
    .number()
    .int()
    .min(1)
    .max(MAX_READ_CHARS)
    .optional()
    .describe(`Character budget of ${what}, 1 to ${MAX_READ_CHARS} (default ${MAX_READ_CHARS}).`)
