/**
 * Interleaved rounds for benchmarks on a shared, noisy machine: every contender runs once per
 * round, in turn, and the figures are medians over rounds, with the spread (min–max over rounds)
 * printed so a reader can tell how noisy the run was. Ratios are taken within one run only.
 */

/** The median of a non-empty list of numbers. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** The spread of a list as a fraction of its median: (max − min) / median. */
export function spread(values: readonly number[]): number {
  return (Math.max(...values) - Math.min(...values)) / median(values);
}

/** Runs each contender once per round, in turn, for `rounds` rounds; answers each one's per-round figures by name. */
export async function interleave<T extends string>(
  rounds: number,
  contenders: Readonly<Record<T, () => Promise<number> | number>>,
): Promise<Record<T, number[]>> {
  const names = Object.keys(contenders) as T[];
  const out = Object.fromEntries(names.map((n) => [n, [] as number[]])) as Record<T, number[]>;
  for (let r = 0; r < rounds; r++) {
    // Alternate the order, so that no contender always runs right after the same one.
    const order = r % 2 === 0 ? names : [...names].reverse();
    for (const name of order) out[name].push(await contenders[name]());
  }
  return out;
}

/** Nanoseconds per call of `fn`, run `calls` times (synchronously). */
export function nsPerCall(calls: number, fn: () => unknown): number {
  const start = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) fn();
  return Number(process.hrtime.bigint() - start) / calls;
}

/** Formats a figure to three significant digits. */
export function fmt(value: number): string {
  return value >= 100 ? value.toFixed(0) : value.toPrecision(3);
}
