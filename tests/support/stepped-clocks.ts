/**
 * The process's two clocks moved by hand: `Date.now` (the wall clock, which an operator or NTP may step)
 * and `performance.now` (the monotonic clock, which only runs forward). Code that measures a wait with
 * the wall clock is fooled by `stepWall`; code that measures it with the monotonic clock is not.
 */
export interface SteppedClocks {
  /** Moves the wall clock by `ms` (negative: back). */
  stepWall(ms: number): void;
  /** Lets `ms` of monotonic time pass at once, without waiting for it. */
  pass(ms: number): void;
  restore(): void;
}

export function stepClocks(): SteppedClocks {
  const wallNow = Date.now;
  const monotonicNow = performance.now;
  let wall = 0;
  let passed = 0;
  Date.now = () => wallNow() + wall;
  performance.now = () => monotonicNow.call(performance) + passed;
  return {
    stepWall: (ms) => void (wall += ms),
    // Time that passes moves the wall clock too.
    pass: (ms) => void ((passed += ms), (wall += ms)),
    restore() {
      Date.now = wallNow;
      performance.now = monotonicNow;
    },
  };
}
