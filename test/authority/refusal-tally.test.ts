import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  createRefusalTally,
  peerAddress,
  readAuditRecords,
  type AuditEntry,
} from "../../src/authority/index.js";
import { openSqliteStore, type Store } from "../../src/store/index.js";

let store: Store;
let clock = 1_000;
const ctx = () => ({ store, now: () => clock });
const records = async (): Promise<AuditEntry[]> => {
  const out: AuditEntry[] = [];
  for await (const r of readAuditRecords({ store })) out.push(r.entry);
  return out;
};
const refusal = (peer: string, detail = "no credentials", rpc = "/charter.v1.X/Y") => ({
  peer,
  rpc,
  detail,
});

beforeEach(async () => {
  store = await openSqliteStore({ file: ":memory:" });
  clock = 1_000;
});
afterEach(() => store.close());

describe("createRefusalTally()", () => {
  it("writes the first refusal of a key at once and folds the rest into one record", async () => {
    const tally = createRefusalTally(ctx(), { intervalMs: 3_600_000 });
    await tally.refused(refusal("127.0.0.1:5001"));
    expect(await records()).toMatchObject([{ peer: "127.0.0.1", count: 1, first: 1000 }]);
    for (let i = 0; i < 10; i++) {
      clock += 1;
      await tally.refused(refusal(`127.0.0.1:${6000 + i}`)); // another port: the same peer
    }
    expect(await records()).toHaveLength(1);
    await tally.close();
    expect((await records()).map((r) => [r.count, r.first, r.last])).toEqual([
      [1, 1000, 1000],
      [10, 1001, 1010],
    ]);
  });

  it("forgets a key idle for a whole interval, so its next refusal is written at once", async () => {
    const tally = createRefusalTally(ctx(), { intervalMs: 20 });
    await tally.refused(refusal("127.0.0.1:1"));
    await new Promise((r) => setTimeout(r, 100));
    await tally.refused(refusal("127.0.0.1:2"));
    expect((await records()).map((r) => r.count)).toEqual([1, 1]);
    await tally.close();
  });

  it("holds at most maxKeys keys; past them it counts per reason under peer and rpc *", async () => {
    const tally = createRefusalTally(ctx(), { intervalMs: 3_600_000, maxKeys: 2 });
    for (const peer of ["10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4", "10.0.0.5"])
      await tally.refused(refusal(`${peer}:1`));
    await tally.refused(refusal("10.0.0.6:1", "an unknown, revoked or malformed API key"));
    await tally.close();
    expect((await records()).map((r) => [r.peer, r.rpc, r.detail, r.count]).sort()).toEqual(
      [
        ["10.0.0.1", "/charter.v1.X/Y", "no credentials", 1],
        ["10.0.0.2", "/charter.v1.X/Y", "no credentials", 1],
        ["*", "*", "no credentials", 1],
        ["*", "*", "no credentials", 2],
        ["*", "*", "an unknown, revoked or malformed API key", 1],
      ].sort(),
    );
  });

  it("keeps a count whose write failed and writes it with the next flush", async () => {
    const tally = createRefusalTally(ctx(), { intervalMs: 3_600_000 });
    await tally.refused(refusal("127.0.0.1:1"));
    await tally.refused(refusal("127.0.0.1:1"));
    const append = store.appendAudit.bind(store);
    let fail = true;
    store.appendAudit = (draft) => (fail ? Promise.reject(new Error("disk full")) : append(draft));
    await expect(tally.flush()).rejects.toThrow("disk full");
    fail = false;
    await tally.close();
    expect((await records()).map((r) => r.count)).toEqual([1, 1]);
  });
});

describe("peerAddress()", () => {
  it.each([
    ["127.0.0.1:53122", "127.0.0.1"],
    ["ipv4:127.0.0.1:53122", "127.0.0.1"],
    ["[::1]:53122", "::1"],
    ["ipv6:[::1]:53122", "::1"],
    ["::1", "::1"],
    ["unix:/tmp/charter.sock", "unix:/tmp/charter.sock"],
    [undefined, "unknown"],
  ])("%s -> %s", (peer, address) => {
    expect(peerAddress(peer)).toBe(address);
  });
});
