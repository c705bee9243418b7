/**
 * What serves MCP itself: the SDK, the tools and their registration. module.ts imports this file at the
 * first POST /mcp or stdio session, not with the server: it is most of a start's module loading (the SDK
 * and the tools were ~0.9 s of CPU and ~17 MB of RSS of an idle server's start, measured), and /health,
 * the editors and the web pages never need it.
 */
export { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
export { buildMcpServer, createSharedServerParts, handleMcpRequest, scopeSetOf } from './http/mcp-route.ts'
export { TOOLS } from './tools/index.ts'
export { callToolDirectly } from './tools/register.ts'
