import { resolve } from 'node:path'

/** The repository's root, and a path from it (files are named from the root in the reference). */
export const ROOT = resolve(import.meta.dir, '../../../../../..')
export const REFERENCE_PATH = 'docs/mcp/reference.md'
export const fromRoot = (path: string) => resolve(ROOT, path)
