/**
 * Its own file, light to import: the CLI's command list (cli/commands/db-alone.ts) tells this refusal apart
 * without importing the copy's machinery.
 */

/** A copy that did not start or was rolled back, for a reason the person can act on (the message says how). */
export class CopyRefused extends Error {
  override name = 'CopyRefused'
}
