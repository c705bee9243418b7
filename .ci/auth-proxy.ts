/**
 * CI only: the conformance CLI (0.1.16) cannot send an Authorization header, and this server has no
 * unauthenticated MCP access. This proxy listens on LISTEN_PORT (loopback), adds
 * `Authorization: Bearer $MCP_TEST_TOKEN` to each request and forwards it unchanged otherwise
 * (method, path, body, Host and Origin headers) to TARGET (the real server), so every check still runs
 * against the server's own Origin/Host guard, auth and MCP handling. The server itself has no bypass.
 */
const target = new URL(process.env.TARGET ?? 'http://127.0.0.1:4123')
const token = process.env.MCP_TEST_TOKEN
if (!token) {
  console.error('auth-proxy: MCP_TEST_TOKEN is required')
  process.exit(2)
}
const proxy = Bun.serve({
  hostname: '127.0.0.1',
  port: Number(process.env.LISTEN_PORT ?? 4124),
  async fetch(request) {
    const url = new URL(request.url)
    const headers = new Headers(request.headers)
    headers.set('authorization', `Bearer ${token}`)
    const upstream = await fetch(new URL(url.pathname + url.search, target), {
      method: request.method,
      headers, // keeps the client's Host: the server's loopback Host check sees what the client sent
      body: request.method === 'GET' || request.method === 'HEAD' ? undefined : await request.arrayBuffer(),
      redirect: 'manual',
    })
    return new Response(upstream.body, { status: upstream.status, headers: upstream.headers })
  },
})
console.error(`auth-proxy: http://127.0.0.1:${proxy.port} -> ${target.origin}`)
