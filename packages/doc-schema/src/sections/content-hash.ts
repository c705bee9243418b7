/**
 * A small synchronous 64-bit hash (two 32-bit multiply-xor lanes, after cyrb53) over UTF-16 code units.
 * Pure JavaScript so Bun, Node and browsers agree; not cryptographic: a rev is a concurrency token.
 */
export class ContentHash {
  private h1 = 0xdeadbeef
  private h2 = 0x41c6ce57

  update(text: string): this {
    let h1 = this.h1
    let h2 = this.h2
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i)
      h1 = Math.imul(h1 ^ code, 2654435761)
      h2 = Math.imul(h2 ^ code, 1597334677)
    }
    this.h1 = h1
    this.h2 = h2
    return this
  }

  /** 16 hex characters. */
  digest(): string {
    let h1 = this.h1
    let h2 = this.h2
    h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909)
    h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909)
    return (h2 >>> 0).toString(16).padStart(8, '0') + (h1 >>> 0).toString(16).padStart(8, '0')
  }
}
