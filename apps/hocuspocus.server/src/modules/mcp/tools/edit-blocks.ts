/** edit_blocks: remove numbered blocks of one section and/or insert Markdown, guarded by the section's rev. */
import { editBlocks as editSectionBlocks } from '@collab/doc-schema'
import { z } from 'zod'
import { MAX_MARKDOWN_CHARS } from '../limits.ts'
import { revField, sectionIdField, slugField } from './fields.ts'
import { defineTool } from './tool.ts'
import { editDocument, SUGGEST_MODE_TEXT } from './write-path.ts'

export const editBlocks = defineTool({
  name: 'edit_blocks',
  kind: 'destructive',
  proposes: true,
  title: 'Edit blocks of a section',
  description:
    'Removes numbered blocks of one section and/or inserts Markdown, in one change. Block numbers are ' +
    'the [n] of read_document with section_id, before removal. With in_block, the numbers are the lines ' +
    "of that block as the read prints them (1 = the line after [n], a table's | - | line counted) and " +
    'name the list items and table rows starting there, nested ones too (tick one box, change one row, ' +
    'without resending the block); a replaced item keeps the sub-items and the blocks under its text that ' +
    'its Markdown does not write out. Pass the rev you read: if the section ' +
    'changed since, the edit is refused and nothing changes (read it again). Blocks you do not name ' +
    'keep everything, including what Markdown cannot show. New blocks that take the place of removed ' +
    'ones are written into them in place (a person typing there keeps their cursor); a removed image ' +
    'whose [image: …] placeholder line the Markdown keeps is kept. ' +
    `Markdown up to ${MAX_MARKDOWN_CHARS} characters. Returns the section's new rev, and the section_id ` +
    'and rev of each section a heading in the Markdown created, after the change is stored.' +
    SUGGEST_MODE_TEXT,
  inputSchema: {
    slug: slugField('The document slug.'),
    section_id: sectionIdField('The section to edit, from get_outline.'),
    rev: revField(),
    remove_blocks: z
      .array(z.number().int().min(1))
      .max(1_000)
      .optional()
      .describe(
        'Block numbers to remove, as read_document numbers them; with in_block, the lines of that block on which the items or rows to remove start.',
      ),
    after_block: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe(
        "Insert after this block (0 = right after the heading). Default: where the first removed block was, else the end. With in_block: after the item or row on this line (and its sub-items); 0 = before the first; a table's | - | line = under the header.",
      ),
    markdown: z
      .string()
      .max(MAX_MARKDOWN_CHARS, {
        error: `markdown: over ${MAX_MARKDOWN_CHARS} characters. Insert the first part here, then the rest with further edit_blocks calls (after_block: the last block inserted) using the new rev each returns.`,
      })
      .optional()
      .describe(
        `Markdown to insert, up to ${MAX_MARKDOWN_CHARS} characters; headings deeper than the section's.`,
      ),
    allow_media_removal: z
      .boolean()
      .optional()
      .describe('Set to true to remove a block that holds an image or embed.'),
    in_block: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe(
        'Edit inside this block (a list, a table, a quote holding a list): remove_blocks and after_block then ' +
          'number the lines of the block as read (1 = its first line, the | - | line of a table is line 2), ' +
          'and markdown gives items ("- [x] task", copied with the indentation or "> " the read shows) or rows ("| a | b |").',
      ),
  },
  handler: (args, ctx) => {
    ctx.report?.stage(`editing blocks and storing ${args.markdown?.length ?? 0} characters of Markdown`)
    return editDocument(
      ctx,
      args.slug,
      (fragment) => {
        const edited = editSectionBlocks(fragment, args.section_id, args.rev, {
          removeBlocks: args.remove_blocks,
          afterBlock: args.after_block,
          markdown: args.markdown,
          allowMediaRemoval: args.allow_media_removal,
          inBlock: args.in_block,
        })
        // "Nothing to change" names no single field of the model; here it is the Markdown that is missing.
        return edited.kind === 'error' && edited.reason === 'nothing_to_change' && edited.field === undefined
          ? { ...edited, field: 'markdown' }
          : edited
      },
      (done) =>
        [
          `section_id: ${args.section_id}`,
          `rev: ${done.rev}`,
          ...done.created.map((made) => `created: section_id: ${made.sectionId}, rev: ${made.rev}`),
        ].join('\n'),
      args.section_id,
    )
  },
})
