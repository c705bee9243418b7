/**
 * The document model names fields in camelCase (removeBlocks, oldText…); the tools take snake_case.
 * Refusals reach the model with the tool's own field names, so "the field at fault" is one it can send.
 */
const RENAMES: ReadonlyArray<readonly [RegExp, string]> = [
  [/\bremoveBlocks\b/g, 'remove_blocks'],
  [/\bafterBlock\b/g, 'after_block'],
  [/\ballowMediaRemoval\b/g, 'allow_media_removal'],
  [/\boldText\b/g, 'old_text'],
  [/\bnewText\b/g, 'new_text'],
  [/\bfromBlock\b/g, 'from_block'],
  [/\beditBlocks\b/g, 'edit_blocks'],
  [/^edit: /, 'markdown: '],
]

export function toToolFieldNames(message: string): string {
  return RENAMES.reduce((text, [pattern, name]) => text.replace(pattern, name), message)
}
