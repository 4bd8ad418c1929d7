/**
 * Whether a value nests arrays and objects deeper than `max` levels (a scalar is depth 0, `[]` is 1).
 * Iterative, so a value of any depth is measured without overflowing the stack; it stops at the
 * first container past the bound.
 */
export function jsonDepthExceeds(value: unknown, max: number): boolean {
  const stack: { readonly value: unknown; readonly depth: number }[] = [{ value, depth: 0 }];
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    if (typeof top.value !== "object" || top.value === null) continue;
    const depth = top.depth + 1;
    if (depth > max) return true;
    for (const child of Object.values(top.value)) stack.push({ value: child, depth });
  }
  return false;
}
