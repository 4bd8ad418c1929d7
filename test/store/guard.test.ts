import { describe, expect, it } from "vitest";
import { guardStore, type GuardOptions } from "../../src/store/guard.js";
import { StoreError } from "../../src/store/port.js";
import { expectStoreError } from "./contract.js";

/** A tiny port of two operations, to exercise the guard alone (the real store runs the contract suite). */
interface Counter {
  add(n: number): Promise<number>;
  fail(err: unknown): Promise<void>;
}

function counter(): Counter & { calls: number } {
  let total = 0;
  const ops = {
    calls: 0,
    async add(n: number) {
      ops.calls += 1;
      total += n;
      return total;
    },
    async fail(err: unknown) {
      ops.calls += 1;
      throw err;
    },
  };
  return ops;
}

const DOING = { add: (n: number) => `add ${n}`, fail: () => "fail on purpose" };

function options(released: string[] = []): GuardOptions {
  const translate = (err: unknown, doing: string) =>
    new StoreError(
      "UNAVAILABLE",
      `test store could not ${doing}: ${err instanceof Error ? err.message : String(err)}`,
      { cause: err },
    );
  return { adapter: "test store", translate, release: () => void released.push("released") };
}

describe("guardStore()", () => {
  it("passes arguments and answers through", async () => {
    const ops = counter();
    const { calls: _calls, ...port } = ops;
    const store = guardStore(port, DOING, options());
    expect(await store.add(2)).toBe(2);
    expect(await store.add(3)).toBe(5);
    expect(ops.calls).toBe(2);
  });

  it("translates what an operation threw into a StoreError naming what it was doing, keeping the cause", async () => {
    const { calls: _calls, ...port } = counter();
    const store = guardStore(port, DOING, options());
    const cause = new RangeError("boom");
    const err = await expectStoreError(store.fail(cause), "UNAVAILABLE");
    expect(err.message).toBe("test store could not fail on purpose: boom");
    expect(err.cause).toBe(cause);
    const conflict = new StoreError("CONFLICT", "exists already");
    await expect(store.fail(conflict)).rejects.toBe(conflict);
  });

  it("fails every operation UNAVAILABLE after close, without running it", async () => {
    const ops = counter();
    const { calls: _calls, ...port } = ops;
    const released: string[] = [];
    const store = guardStore(port, DOING, options(released));
    await store.close();
    const err = await expectStoreError(store.add(1), "UNAVAILABLE");
    expect(err.message).toBe("test store could not add 1: the store is closed");
    await expectStoreError(store.fail(new Error("x")), "UNAVAILABLE");
    expect(ops.calls).toBe(0);
    await store.close();
    expect(released).toEqual(["released"]);
  });

  it("translates a failure to release the connections", async () => {
    const { calls: _calls, ...port } = counter();
    const store = guardStore(port, DOING, {
      ...options(),
      release: () => Promise.reject(new Error("disk gone")),
    });
    await expectStoreError(store.close(), "UNAVAILABLE");
  });

  it("answers a StoreError even when describing the call throws", async () => {
    const { calls: _calls, ...port } = counter();
    const store = guardStore(
      port,
      { ...DOING, add: (n: number) => `add ${(n as unknown as { x: { y: number } }).x.y}` },
      options(),
    );
    const err = await expectStoreError(store.add(1), "UNAVAILABLE");
    expect(err.message).toContain("could not add");
  });

  it("refuses an operation that has no description, so none is exposed unguarded", () => {
    const { calls: _calls, ...port } = counter();
    // @ts-expect-error -- the compiler refuses a description table that misses an operation
    expect(() => guardStore(port, { add: DOING.add }, options())).toThrow(
      "test store: operations without a description: fail",
    );
  });
});
