/**
 * `bun idle-sockets.ts URL COUNT SECONDS`: opens COUNT WebSockets to the server, one after another as fast
 * as they open, and never authenticates any of them; holds them SECONDS. Prints one line of JSON: how many
 * opened, the most open at once, how many the server closed (and with what reasons), and how many were
 * refused before opening.
 */
export {}

const [url, count, seconds] = process.argv.slice(2) as [string, string, string]
let opened = 0
let openNow = 0
let mostOpen = 0
let refused = 0
let closedByServer = 0
const reasons = new Map<string, number>()
const sockets: WebSocket[] = []
let stopping = false
for (let i = 0; i < Number(count); i++) {
  const socket = new WebSocket(url.replace(/^http/, 'ws'))
  sockets.push(socket)
  let wasOpen = false
  await new Promise<void>((resolve) => {
    socket.onopen = () => {
      wasOpen = true
      opened++
      mostOpen = Math.max(mostOpen, ++openNow)
      resolve()
    }
    socket.onerror = () => {
      if (!wasOpen) refused++
      resolve()
    }
    socket.onclose = (event) => {
      resolve()
      if (!wasOpen) return
      openNow--
      if (stopping) return
      closedByServer++
      const reason = event.reason || String(event.code)
      reasons.set(reason, (reasons.get(reason) ?? 0) + 1)
    }
  })
}
await Bun.sleep(Number(seconds) * 1000)
const stillOpen = sockets.filter((s) => s.readyState === WebSocket.OPEN).length
stopping = true
for (const socket of sockets) socket.close()
console.log(
  JSON.stringify({
    opened,
    mostOpen,
    refused,
    closedByServer,
    openAtEnd: stillOpen,
    reasons: Object.fromEntries(reasons),
  }),
)
