/** Moved to the @collab/test-support package (packages/test-support/src/search-text.ts); this path keeps older imports working. */
export * from '@collab/test-support/search-text'
