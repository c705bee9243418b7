/**
 * Work written as steps (a generator that pauses between pieces, so a caller on a busy thread can let
 * others in between them) run without pausing, for a caller that wants the answer at once.
 */
export function finishSteps<T>(steps: Generator<unknown, T>): T {
  for (let step = steps.next(); ; step = steps.next()) if (step.done) return step.value
}
