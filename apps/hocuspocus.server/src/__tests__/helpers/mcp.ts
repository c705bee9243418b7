/** Moved to the @collab/test-support package (packages/test-support/src/mcp.ts); this path keeps older imports working. */
export * from '@collab/test-support/mcp'
