import { describe, expect, it } from "vitest";
import { timeOrderedUuid } from "../../src/app/time-ordered-id.js";

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("timeOrderedUuid()", () => {
  it("is a version 7 UUID whose first 48 bits are the time in milliseconds", () => {
    const id = timeOrderedUuid(0x0123_4567_89ab);
    expect(id).toMatch(V7);
    expect(id.startsWith("01234567-89ab-7")).toBe(true);
  });

  it("stays unique under a burst of ids made in the same millisecond", () => {
    const ids = Array.from({ length: 100_000 }, () => timeOrderedUuid(1_750_000_000_000));
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids.slice(0, 1000)) expect(id).toMatch(V7);
  });

  it("keeps 74 random bits: every random digit varies across a burst", () => {
    const ids = Array.from({ length: 2000 }, () =>
      timeOrderedUuid(1_750_000_000_000).replaceAll("-", ""),
    );
    // Hex digits 13..15 (rand_a), 16 (variant: two random bits), 17..31 (rand_b).
    for (const at of [13, 14, 15, 17, 20, 25, 31])
      expect(new Set(ids.map((id) => id[at])).size).toBe(16);
    expect(new Set(ids.map((id) => id[16]))).toEqual(new Set(["8", "9", "a", "b"]));
  });

  it("sorts an id of a later millisecond after an earlier one", () => {
    const ids = [1_750_000_000_000, 1_750_000_000_001, 1_750_000_000_256, 1_850_000_000_000].map(
      (ms) => timeOrderedUuid(ms),
    );
    expect([...ids].sort()).toEqual(ids);
  });
});
