import { describe, expect, it } from "vitest";
import { restartDelayMs } from "../../src/app/cluster.js";

describe("restartDelayMs()", () => {
  it("waits 100 ms after a first crash, doubles per consecutive crash, and never more than 10 s", () => {
    expect([1, 2, 3, 4, 7, 8, 50].map(restartDelayMs)).toEqual([
      100, 200, 400, 800, 6400, 10_000, 10_000,
    ]);
  });
});
