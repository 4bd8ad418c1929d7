import { describe, expect, it } from "vitest";
import { freshListings, type Listing } from "../../src/gateway/listing.js";

/** A listing function whose calls are resolved by hand, numbered in the order they started. */
function manualListings() {
  const pending: (() => void)[] = [];
  let started = 0;
  const list = () =>
    new Promise<Listing>((resolve) => {
      const n = ++started;
      pending.push(() => resolve({ ok: false, problem: `listing ${n}` }));
    });
  const finish = async () => {
    pending.shift()?.();
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { list, finish, started: () => started };
}

const problemOf = async (p: Promise<Listing>) => {
  const listing = await p;
  return listing.ok ? "" : listing.problem;
};

describe("freshListings()", () => {
  it("runs one listing at a time and hands no caller a listing begun before it asked", async () => {
    const m = manualListings();
    const get = freshListings(m.list);
    const first = problemOf(get()); // starts listing 1
    const second = problemOf(get()); // arrived while 1 runs: waits for 2
    const third = problemOf(get()); // shares 2 with the second
    expect(m.started()).toBe(1);
    await m.finish();
    expect(m.started()).toBe(2);
    const fourth = problemOf(get()); // arrived while 2 runs: waits for 3
    await m.finish();
    await m.finish();
    expect(await Promise.all([first, second, third, fourth])).toEqual([
      "listing 1",
      "listing 2",
      "listing 2",
      "listing 3",
    ]);
    expect(m.started()).toBe(3);
  });
});
