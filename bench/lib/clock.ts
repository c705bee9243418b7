/**
 * One clock for every process of the machine: CLOCK_MONOTONIC, in milliseconds, read through libc.
 *
 * The bench times what one process does against what another sees (an insert here, an editor in its own
 * process noticing it). It used `performance.timeOrigin + performance.now()`, which is the wall clock at
 * the process's start plus the monotonic time since; the two agree only while the wall clock runs at the
 * monotonic clock's rate. On a machine where it does not (seen here: CLOCK_REALTIME ran 4,900 ppm fast
 * against CLOCK_MONOTONIC, under a host's correction), two processes started minutes apart disagreed by
 * seconds, and a propagation of a few milliseconds read as 4.2 s. Bun's `process.hrtime` counts from the
 * process's start, unlike Node's, so the system's monotonic clock is asked directly.
 */
import { dlopen, FFIType, ptr } from 'bun:ffi'

/** Linux's id of CLOCK_MONOTONIC (macOS: 6). */
const CLOCK_MONOTONIC = process.platform === 'darwin' ? 6 : 1

function monotonicReader(): (() => number) | null {
  try {
    const lib = dlopen(process.platform === 'darwin' ? 'libSystem.B.dylib' : 'libc.so.6', {
      clock_gettime: { args: [FFIType.i32, FFIType.ptr], returns: FFIType.i32 },
    })
    const spec = new BigInt64Array(2) // struct timespec: seconds, nanoseconds (64-bit platforms)
    const at = ptr(spec)
    return () => {
      lib.symbols.clock_gettime(CLOCK_MONOTONIC, at)
      return Number(spec[0]) * 1_000 + Number(spec[1]) / 1_000_000
    }
  } catch {
    return null
  }
}

const monotonic = monotonicReader()

/**
 * Milliseconds on the machine's monotonic clock, comparable between processes (not a date). Without libc's
 * clock_gettime, the wall-clock reading the bench used before.
 */
export const machineNow: () => number = monotonic ?? (() => performance.timeOrigin + performance.now())
