import { beforeEach, describe, expect, it } from "vitest";
import type { GrantOrigin } from "../../src/core/replay.js";
import type { ReplayRow, Store } from "../../src/store/port.js";
import { ISSUED_AT, makeDecision, makeGrant } from "./fixtures.js";

/** The retained inputs of these decisions, as `readReplayPage` reads them, in the order asked. */
async function inputsOf(store: Store, ids: readonly string[]) {
  const rows = await store.readReplayPage(0, Number.MAX_SAFE_INTEGER, 100_000);
  const byId = new Map(rows.map((r) => [r.decisionId, r.inputs]));
  return ids.map((id) => [id, byId.get(id)]);
}

/** What `charter replay` reads: a grant's recorded origin, and a decision's retained inputs (kept in the commit's unit, pruned by time). */
export function describeReplayInputsContract(current: () => Store): void {
  describe("grant origins and decision inputs", () => {
    let store: Store;
    let n = 0;
    beforeEach(() => {
      store = current();
      n += 1;
    });

    it("reads back the origin a grant was stored with, and none for a grant stored without", async () => {
      const origin: GrantOrigin = {
        kind: "composed",
        request: {
          profile: "p",
          subject: "agent:a",
          owner: "owner:o",
          purpose: "",
          ttlSeconds: 60,
        },
      };
      await store.putGrant(makeGrant(`g-origin-${n}`), "orchestrator", origin);
      await store.putGrant(makeGrant(`g-bare-${n}`));
      expect(await store.getGrantOrigin(`g-origin-${n}`)).toStrictEqual(origin);
      expect(await store.getGrantOrigin(`g-bare-${n}`)).toBeUndefined();
      expect(await store.getGrantOrigin("g-unknown")).toBeUndefined();
    });

    it("keeps a decision's inputs with its record, whatever the outcome, and only for the ids asked", async () => {
      const allow = `dec_in_allow_${n}`;
      const spent = `dec_in_spent_${n}`;
      const bare = `dec_in_bare_${n}`;
      await store.commitDecision(makeDecision(allow), { inputs: '{"arguments":{"a":1}}' });
      // An allow refused at commit (its budget spent) is recorded as a deny: its inputs stay with it.
      await store.commitDecision(makeDecision(`dec_in_fill_${n}`, { grantId: `g-spent-${n}` }), {
        budget: { actionId: "email.send", grants: [{ grantId: `g-spent-${n}`, maxCalls: 1 }] },
      });
      const refused = await store.commitDecision(makeDecision(spent, { grantId: `g-spent-${n}` }), {
        budget: { actionId: "email.send", grants: [{ grantId: `g-spent-${n}`, maxCalls: 1 }] },
        inputs: "sealed-text",
      });
      expect(refused.kind).toBe("refused");
      await store.commitDecision(makeDecision(bare));
      const found = await inputsOf(store, [allow, spent, bare]);
      expect(found).toStrictEqual([
        [allow, '{"arguments":{"a":1}}'],
        [spent, "sealed-text"],
        [bare, undefined],
      ]);
      const rows = await store.readReplayPage(0, Number.MAX_SAFE_INTEGER, 100_000);
      // The refused allow reads back as the deny it was recorded as, in audit order.
      expect(rows.find((r) => r.decisionId === spent)).toMatchObject({
        decision: "deny",
        reasonCode: "LIMIT_EXCEEDED",
      });
      const seqs = rows.map((r) => r.seq);
      expect(seqs).toStrictEqual([...seqs].sort((a, b) => a - b));
    });

    it("reads a page of the log between two seqs, no more than asked", async () => {
      for (let i = 0; i < 3; i++)
        await store.commitDecision(makeDecision(`dec_page_${n}_${i}`), { inputs: `${i}` });
      const all = await store.readReplayPage(0, Number.MAX_SAFE_INTEGER, 100_000);
      const mine = all.filter((r) => r.decisionId.startsWith(`dec_page_${n}_`));
      expect(mine.map((r) => r.inputs)).toStrictEqual(["0", "1", "2"]);
      const [first, second] = mine as [ReplayRow, ReplayRow];
      expect(await store.readReplayPage(first.seq - 1, second.seq, 100)).toMatchObject([
        { decisionId: first.decisionId },
        { decisionId: second.decisionId },
      ]);
      expect(await store.readReplayPage(first.seq - 1, Number.MAX_SAFE_INTEGER, 1)).toHaveLength(1);
    });

    it("prunes inputs of decisions made before the cut, and leaves their records", async () => {
      const old = `dec_in_old_${n}`;
      const fresh = `dec_in_new_${n}`;
      await store.commitDecision(makeDecision(old, { decidedAt: ISSUED_AT + 5 }), { inputs: "o" });
      await store.commitDecision(makeDecision(fresh, { decidedAt: ISSUED_AT + 50 }), {
        inputs: "f",
      });
      expect(await store.pruneDecisionInputs(ISSUED_AT + 6)).toBeGreaterThanOrEqual(1);
      expect(await inputsOf(store, [old, fresh])).toStrictEqual([
        [old, undefined],
        [fresh, "f"],
      ]);
      expect(await store.getDecision(old)).toBeDefined();
    });
  });
}
