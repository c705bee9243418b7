/**
 * fast-check parameters. Locally every run draws a fresh seed, so the properties keep exploring; under CI
 * (CI=true) the seed is fixed, so a run is reproducible and a red CI always means a change, not luck.
 * A local failure prints its seed and path: replay it with { seed, path } here.
 */
export const CI_SEED = 20_261_129

export function runs(numRuns: number): { numRuns: number; seed?: number } {
  return process.env.CI ? { numRuns, seed: CI_SEED } : { numRuns }
}
