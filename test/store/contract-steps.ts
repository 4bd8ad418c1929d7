import { beforeEach, describe, expect, it } from "vitest";
import type { DecisionEffects, StepSlot, Store } from "../../src/store/port.js";
import { makeDecision } from "./fixtures.js";

const slot = (overrides: Partial<StepSlot> = {}): StepSlot => ({
  runId: "run-1",
  stepKey: '["activation","act-1",1]',
  fingerprint: "f".repeat(64),
  verdictJson: '{"decision":"allow"}',
  receipt: "receipt-1",
  ...overrides,
});

/** The step index: (grant, run, step) holds one decision, claimed in the commit's unit of work, whatever the concurrency. */
export function describeStepsContract(current: () => Store): void {
  describe("commitDecision() with a step", () => {
    let store: Store;
    let n = 0;
    const id = () => `dec_step_${n++}`;
    const stepped = (
      decisionId: string,
      effects: DecisionEffects,
      overrides: Parameters<typeof makeDecision>[1] = {},
    ) =>
      store.commitDecision(
        makeDecision(decisionId, {
          runId: "run-1",
          stepKey: effects.step?.stepKey ?? "",
          ...overrides,
        }),
        effects,
      );
    beforeEach(() => {
      store = current();
    });

    it("holds the first decision of a step, with its receipt, and answers it to a second without writing or charging anything", async () => {
      const first = id();
      const budget = { actionId: "email.send", grants: [{ grantId: "g-root", maxCalls: 5 }] };
      expect(await stepped(first, { step: slot(), budget })).toEqual({ kind: "committed" });
      const held = await store.getStep("g-root", "run-1", slot().stepKey);
      expect(held).toEqual({
        decisionId: first,
        fingerprint: slot().fingerprint,
        verdictJson: slot().verdictJson,
        receipt: "receipt-1",
        decision: "allow",
      });
      const head = await store.auditHead();
      const second = id();
      expect(await stepped(second, { step: slot({ receipt: "receipt-2" }), budget })).toEqual({
        kind: "step_held",
        held,
      });
      expect(await store.getDecision(second)).toBeUndefined();
      expect(await store.auditHead()).toEqual(head);
      expect((await store.getBudgetUsage("g-root")).calls).toBe(1);
    });

    it("keeps steps apart by grant, run and step, and answers undefined for a step not decided", async () => {
      const key = '["tool_call","tc-1"]';
      await stepped(id(), { step: slot({ stepKey: key }) });
      expect(
        (await stepped(id(), { step: slot({ stepKey: key, runId: "run-2" }) }, { runId: "run-2" }))
          .kind,
      ).toBe("committed");
      expect(
        (await stepped(id(), { step: slot({ stepKey: key }) }, { grantId: "g-other" })).kind,
      ).toBe("committed");
      expect((await stepped(id(), { step: slot({ stepKey: '["tool_call","tc-2"]' }) })).kind).toBe(
        "committed",
      );
      expect(await store.getStep("g-root", "run-3", key)).toBeUndefined();
    });

    it("keeps no receipt for an allow the commit refused, and reads the step back as that deny", async () => {
      const first = id();
      const step = slot({ stepKey: '["tool_call","spent"]' });
      expect(
        await stepped(first, {
          step,
          budget: { actionId: "email.send", grants: [{ grantId: "g-spent", maxCalls: 0 }] },
        }),
      ).toMatchObject({ kind: "refused" });
      expect(await store.getStep("g-root", "run-1", step.stepKey)).toEqual({
        decisionId: first,
        fingerprint: step.fingerprint,
        verdictJson: step.verdictJson,
        decision: "deny",
        reasonCode: "LIMIT_EXCEEDED",
      });
    });

    it("lets only a decision made with an approval replace a held require_approval", async () => {
      const key = '["activation","held",1]';
      const pending = slot({ stepKey: key, verdictJson: '{"decision":"require_approval"}' });
      await stepped(id(), { step: pending }, { decision: "require_approval" });
      // Without an approval, or require_approval again: the held decision stands.
      expect((await stepped(id(), { step: slot({ stepKey: key }) })).kind).toBe("step_held");
      expect(
        (
          await stepped(
            id(),
            { step: { ...pending, supersedesPending: true } },
            { decision: "require_approval" },
          )
        ).kind,
      ).toBe("step_held");
      const approved = id();
      expect(
        await stepped(approved, { step: slot({ stepKey: key, supersedesPending: true }) }),
      ).toEqual({ kind: "committed" });
      expect(await store.getStep("g-root", "run-1", key)).toMatchObject({
        decisionId: approved,
        decision: "allow",
        receipt: "receipt-1",
      });
      // A final decision is never replaced.
      expect(
        (await stepped(id(), { step: slot({ stepKey: key, supersedesPending: true }) })).kind,
      ).toBe("step_held");
    });

    it("records the run and step on the decision and its audit record", async () => {
      const decisionId = id();
      await stepped(decisionId, { step: slot({ stepKey: '["tool_call","audited"]' }) });
      expect(await store.getDecision(decisionId)).toMatchObject({
        runId: "run-1",
        stepKey: '["tool_call","audited"]',
      });
      const rows = await store.readAudit(0, 100_000);
      const entry = rows
        .map((r) => JSON.parse(r.entry) as Record<string, unknown>)
        .find((e) => e["decisionId"] === decisionId);
      expect(entry).toMatchObject({ runId: "run-1", step: '["tool_call","audited"]' });
    });

    it("commits one decision of 20 racing for one step; the others answer it", async () => {
      const step = slot({ stepKey: '["activation","race",1]' });
      const budget = { actionId: "email.send", grants: [{ grantId: "g-race", maxCalls: 100 }] };
      const outcomes = await Promise.all(
        Array.from({ length: 20 }, () => stepped(id(), { step, budget })),
      );
      expect(outcomes.filter((o) => o.kind === "committed")).toHaveLength(1);
      const held = await store.getStep("g-root", "run-1", step.stepKey);
      const answered = outcomes.flatMap((o) => (o.kind === "step_held" ? [o.held.decisionId] : []));
      expect(answered).toHaveLength(19);
      expect(new Set(answered)).toEqual(new Set([held?.decisionId]));
      expect((await store.getBudgetUsage("g-race")).calls).toBe(1);
    });
  });
}
