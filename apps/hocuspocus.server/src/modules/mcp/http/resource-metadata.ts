/**
 * OAuth 2.0 Protected Resource Metadata (RFC 9728) for /mcp: where a 401's WWW-Authenticate points.
 * Tokens are API tokens issued with the CLI, so no authorization server is listed.
 */

export const RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource/mcp'

export function resourceMetadata(origin: string) {
  return {
    resource: `${origin}/mcp`,
    authorization_servers: [] as string[],
    scopes_supported: ['read', 'write'],
    bearer_methods_supported: ['header'],
    resource_name: 'Collaborative documents (MCP)',
  }
}

/** The WWW-Authenticate parameters of a 401 from /mcp. */
export function challengeFor(origin: string): string {
  return `resource_metadata="${origin}${RESOURCE_METADATA_PATH}"`
}
