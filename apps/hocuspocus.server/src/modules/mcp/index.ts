/** The MCP module's only public surface. */

export * as limits from './limits.ts'
export { init, type McpConfig, type McpDeps, type McpModule } from './module.ts'
