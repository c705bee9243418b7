/**
 * The bytes of Hocuspocus's messages as a hostile client writes them by hand (no provider: an attacker
 * need not run one): varuints, length-prefixed strings, and the authentication message of a document.
 */
const encoder = new TextEncoder()

export function varUint(n: number): number[] {
  const out: number[] = []
  while (n > 0x7f) {
    out.push(0x80 | (n & 0x7f))
    n = Math.floor(n / 128)
  }
  out.push(n)
  return out
}

export const varBytes = (bytes: Uint8Array): Buffer =>
  Buffer.concat([Buffer.from(varUint(bytes.length)), bytes])
export const varString = (text: string): Buffer => varBytes(encoder.encode(text))

/** Message type 2 (auth), sub-type 0 (token): what a provider sends first for each document. */
export const authMessage = (room: string, token: string): Buffer =>
  Buffer.concat([varString(room), Buffer.from(varUint(2)), Buffer.from(varUint(0)), varString(token)])

/** A WebSocket to the server at `url` (http or ws), open. */
export async function openSocket(url: string): Promise<WebSocket> {
  const socket = new WebSocket(url.replace(/^http/, 'ws'))
  socket.binaryType = 'arraybuffer'
  await new Promise((resolve, reject) => {
    socket.onopen = resolve
    socket.onerror = reject
  })
  return socket
}
