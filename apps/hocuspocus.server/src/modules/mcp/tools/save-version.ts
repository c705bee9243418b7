/**
 * save_version: a version of a document named on request (a checkpoint before a large change, say), kept
 * longer than automatic ones (docs/history.md: retention). Of the stored content; needs write access.
 */
import { z } from 'zod'
import { MAX_NAMED_VERSIONS, MAX_VERSION_NAME_CHARS, NAMED_VERSION_KEEP_MS } from '../../../limits.ts'
import { slugField } from './fields.ts'
import { goneRefusal } from './open-document.ts'
import { defineTool } from './tool.ts'
import { resolveForWrite } from './write-path.ts'

export const saveVersion = defineTool({
  name: 'save_version',
  kind: 'write',
  title: 'Save a named version',
  description:
    'Takes a version of a document now, with a name (a checkpoint before a large change, say): ' +
    'list_versions shows it, changes_since can start from it, and it is kept longer than the versions ' +
    `taken automatically (up to ${MAX_NAMED_VERSIONS} named versions per document, for ` +
    `${Math.round(NAMED_VERSION_KEEP_MS / 86_400_000)} days). Of the stored content (what editors typed in ` +
    'the last second may not be in it yet). Returns its version id. ' +
    'Needs write access and a token with scope write.',
  inputSchema: {
    slug: slugField('The document slug.'),
    version_name: z
      .string()
      .trim()
      .min(1)
      .max(MAX_VERSION_NAME_CHARS)
      .optional()
      .describe(
        `The version's name, up to ${MAX_VERSION_NAME_CHARS} characters (default: "saved by <your handle>").`,
      ),
  },
  async handler({ slug, version_name }, ctx) {
    const resolved = await resolveForWrite(ctx, slug)
    if (resolved.kind === 'error') return resolved
    const name = version_name ?? `saved by ${ctx.principal.user.handle}`
    const saved = await ctx.documents.saveNamedVersion(resolved.value.document.room, name)
    if (!saved) return goneRefusal(slug)
    return `version: ${saved.id}`
  },
})
