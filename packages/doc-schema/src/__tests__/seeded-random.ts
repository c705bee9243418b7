/**
 * The one seeded pseudo-random generator of tests and benchmarks (mulberry32): fixtures are identical run
 * to run and a failing run replays from its seed. Never Math.random where a run must be reproducible.
 */
export type Rng = () => number

/** A generator of numbers in [0, 1) determined by `seed`. */
export function seededRandom(seed: number): Rng {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296
  }
}
