/**
 * `bun reconnect.ts URL ROOM TOKEN LOOPS SECONDS`: LOOPS loops, each opening a socket, authenticating
 * ROOM and closing once answered, for SECONDS. Prints one line of JSON: sockets opened, authenticated,
 * refused, and the close reasons met. Bounded by OPENS_PER_SECOND per user (docs/server.md).
 */
import { authMessage } from './wire.ts'

const [url, room, token, loops, seconds] = process.argv.slice(2) as [string, string, string, string, string]
const auth = authMessage(room, token)
const end = Date.now() + Number(seconds) * 1000
let opened = 0
let authenticated = 0
let refused = 0
const reasons = new Map<string, number>()

async function loop(): Promise<void> {
  while (Date.now() < end) {
    const socket = new WebSocket(url.replace(/^http/, 'ws'))
    socket.binaryType = 'arraybuffer'
    await new Promise<void>((resolve) => {
      socket.onopen = () => {
        opened++
        socket.send(auth)
      }
      socket.onmessage = (event) => {
        // [room][type 2: auth][2: authenticated, else refused]
        const bytes = new Uint8Array(event.data as ArrayBuffer)
        const roomLength = bytes[0] ?? 0
        if (bytes[1 + roomLength] !== 2) return
        if (bytes[2 + roomLength] === 2) authenticated++
        else refused++
        socket.close()
        resolve()
      }
      socket.onclose = (event) => {
        if (event.reason) reasons.set(event.reason, (reasons.get(event.reason) ?? 0) + 1)
        resolve()
      }
      socket.onerror = () => resolve()
    })
  }
}

await Promise.all(Array.from({ length: Number(loops) }, loop))
console.log(JSON.stringify({ opened, authenticated, refused, reasons: Object.fromEntries(reasons) }))
process.exit(0)
