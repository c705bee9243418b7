import { startFreshServer, userWithToken } from '@collab/test-support/server'
import { call, connectClient } from '@collab/test-support/mcp'
const fresh = await startFreshServer()
try {
  const { user, token } = await userWithToken(fresh.server, 'writer')
  const created = await fresh.server.services.documents.create(user.id, { title: 'W', markdown: 'hello' })
  if (created.kind === 'error') throw new Error(created.message)
  const client = await connectClient(`${fresh.server.url}/mcp`, token)
  for (const [name, args] of [['append_to_document', { slug: created.value.slug, markdown: 'para' }], ['get_outline', { slug: created.value.slug }]] as const) {
    const ms: number[] = []
    for (let i = 0; i < 25; i++) {
      const s = performance.now()
      const r = await call(client, name, args as never)
      ms.push(performance.now() - s)
      if (r.isError) throw new Error(r.text)
    }
    ms.sort((a, b) => a - b)
    console.log(name, 'p50', ms[12]!.toFixed(1), 'min', ms[0]!.toFixed(1), 'max', ms.at(-1)!.toFixed(1), ms.map((x) => x.toFixed(0)).join(' '))
  }
  await client.close()
} finally {
  await fresh.close()
}
