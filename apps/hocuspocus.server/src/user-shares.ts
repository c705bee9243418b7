/**
 * A share per user of something the server spends on them: editing work in structs (collab/boundary.ts),
 * MCP call time in ms (modules/mcp/infra/server-time.ts). One bucket per user, refilled at `perSecond` up to
 * `burst`; spending may take it below zero, and that debt is how long the user waits (an editor's message)
 * or is refused (a call) before spending again. Once MAX_TRACKED_USERS are remembered, users whose share is
 * whole again are forgotten (a whole share and no entry are the same).
 */
export const MAX_TRACKED_USERS = 10_000

export class UserShares {
  private readonly buckets = new Map<string, { left: number; at: number }>()

  constructor(
    readonly perSecond: number,
    readonly burst: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Spends `amount` of `userId`'s share; returns how long they owe before it has something left (ms). */
  spend(userId: string, amount: number): number {
    const left = this.left(userId) - amount
    if (!this.buckets.has(userId) && this.buckets.size >= MAX_TRACKED_USERS)
      for (const [id] of this.buckets) if (this.left(id) >= this.burst) this.buckets.delete(id)
    this.buckets.set(userId, { left, at: this.now() })
    return this.owedOf(left)
  }

  /** How long `userId` owes before their share has something left (ms; 0 while it lasts). */
  owedMs(userId: string): number {
    return this.owedOf(this.left(userId))
  }

  /** What is left of `userId`'s share now (at most `burst`; below zero while they owe). */
  left(userId: string): number {
    const bucket = this.buckets.get(userId)
    if (!bucket) return this.burst
    const now = this.now()
    bucket.left = Math.min(this.burst, bucket.left + ((now - bucket.at) / 1000) * this.perSecond)
    bucket.at = now
    return bucket.left
  }

  private owedOf(left: number): number {
    return left >= 0 ? 0 : (-left / this.perSecond) * 1000
  }
}
