/**
 * OAuth 2.0 Protected Resource Metadata (RFC 9728) for /mcp: where a 401's WWW-Authenticate points.
 * It lists this server's own authorization server (auth/, under /auth) when sign-in is on; API tokens
 * issued with the CLI are accepted either way.
 */

export const RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource/mcp'

export function resourceMetadata(origin: string, authorizationServers: readonly string[] = []) {
  return {
    resource: `${origin}/mcp`,
    authorization_servers: [...authorizationServers],
    scopes_supported: ['read', 'write', 'suggest'],
    bearer_methods_supported: ['header'],
    resource_name: 'Collaborative documents (MCP)',
  }
}

/**
 * The scopes a client should ask for: both MCP scopes (the person may narrow them on the consent
 * page) and offline_access, without which no refresh token is issued.
 */
export const CHALLENGE_SCOPES = 'read write offline_access'

/** The WWW-Authenticate parameters of a 401 from /mcp (with `scope` when OAuth is offered). */
export function challengeFor(origin: string, oauth = false): string {
  const metadata = `resource_metadata="${origin}${RESOURCE_METADATA_PATH}"`
  return oauth ? `${metadata}, scope="${CHALLENGE_SCOPES}"` : metadata
}
