/**
 * The server's own writes to live documents (MCP tools, history restores and reverts: modules/mcp/infra/
 * writer.ts), counted from just before their first change is applied until their direct connection is
 * closed. A stop closes the gate first (nothing new is applied), then waits for the writes under way before
 * its last store: a write that went on applying after that store left the instance holding a change it
 * could no longer store ('document not stored', exit 1, in the rolling restart behind nginx).
 */
export class WriteGate {
  private active = 0
  private closed = false
  private readonly waiting: (() => void)[] = []

  /** Admits a write: the function to call once it has ended, or undefined when the stop has begun. */
  enter(): (() => void) | undefined {
    if (this.closed) return undefined
    this.active++
    let left = false
    return () => {
      if (left) return
      left = true
      this.active--
      if (this.active === 0) for (const resolve of this.waiting.splice(0)) resolve()
    }
  }

  /** From now on every write is refused before it applies anything. */
  close(): void {
    this.closed = true
  }

  /** Waits until the writes admitted before `close` have ended, at most `ms`; returns how many had not. */
  async settled(ms: number): Promise<number> {
    if (this.active === 0) return 0
    let timer: ReturnType<typeof setTimeout> | undefined
    await Promise.race([
      new Promise<void>((resolve) => this.waiting.push(resolve)),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, ms)
      }),
    ])
    clearTimeout(timer)
    return this.active
  }
}
