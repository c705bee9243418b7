/** Moved to the @collab/test-support package (packages/test-support/src/browser.ts); this path keeps older imports working. */
export * from '@collab/test-support/browser'
