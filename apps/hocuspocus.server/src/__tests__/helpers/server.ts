/** Moved to the @collab/test-support package (packages/test-support/src/server.ts); this path keeps older imports working. */
export * from '@collab/test-support/server'
