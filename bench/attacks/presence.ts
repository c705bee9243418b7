/**
 * `bun presence.ts URL ROOM TOKEN SOCKETS PER_SECOND SECONDS`: SOCKETS authenticated sockets of one user,
 * each sending PER_SECOND awareness messages of four states of ~7 KB (inside every per-socket limit) for
 * SECONDS. Prints one line of JSON: messages sent, sockets closed and why. Bounded by the user's presence
 * fanout and byte shares (docs/server.md).
 */
import { authMessage, openSocket, varBytes, varString, varUint } from './wire.ts'

const [url, room, token, sockets, perSecond, seconds] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
  string,
]
const roomBytes = varString(room)
const open: WebSocket[] = []
const closes: string[] = []
for (let s = 0; s < Number(sockets); s++) {
  const socket = await openSocket(url)
  socket.onclose = (event) => closes.push(event.reason)
  socket.send(authMessage(room, token))
  open.push(socket)
}
await Bun.sleep(500)
const pad = 'x'.repeat(7_000)
let sent = 0
const end = Date.now() + Number(seconds) * 1000
for (let clock = 1; Date.now() < end; clock++) {
  const state = varString(JSON.stringify({ cursor: { pad, n: clock } }))
  for (const [s, socket] of open.entries()) {
    if (socket.readyState !== WebSocket.OPEN) continue
    const entries: Buffer[] = [Buffer.from(varUint(4))]
    for (let c = 0; c < 4; c++)
      entries.push(Buffer.from([...varUint(1_000_000 + s * 10 + c), ...varUint(clock)]), state)
    // Message type 1: awareness, its update as one length-prefixed part.
    socket.send(Buffer.concat([roomBytes, Buffer.from(varUint(1)), varBytes(Buffer.concat(entries))]))
    sent++
  }
  await Bun.sleep(1000 / Number(perSecond))
}
console.log(JSON.stringify({ sent, closed: closes.length, reasons: [...new Set(closes)] }))
process.exit(0)
