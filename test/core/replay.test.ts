import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { buildPolicy, compose, delegate, type Policy } from "../../src/core/index.js";
import {
  recompose,
  replayDecision,
  replayTally,
  type OriginLink,
  type RecordedDecision,
} from "../../src/core/replay.js";
import { parseDocumentText } from "../../src/load/documents.js";
import { demoPair } from "../support/demo.js";

const NOW = 1_767_225_600;
const { catalog, policy } = demoPair();
const POLICY_TEXT = readFileSync(new URL("../../fixtures/policy.yaml", import.meta.url), "utf8");

/** The demo policy with one piece of its text replaced. */
function variant(from: string, to: string): Policy {
  expect(POLICY_TEXT).toContain(from);
  const text = POLICY_TEXT.replace(from, to);
  return buildPolicy(parseDocumentText(text, "policy.yaml"), catalog, "policy.yaml");
}
const LOWERED = variant("amount: { exclusiveMinimum: 100 }", "amount: { exclusiveMinimum: 30 }");

const request = {
  profile: "owner-assistant",
  subject: "agent:a",
  owner: "ana@example.com",
  purpose: "replay",
};
const root: OriginLink = {
  grantId: "grt_root",
  issuedAt: NOW,
  origin: { kind: "composed", request },
};
const refund = (amount: number) => ({
  order_id: "ord_A1B2C3",
  amount,
  currency: "EUR",
  reason: "other",
});
const recorded = (over: Partial<RecordedDecision> = {}): RecordedDecision => ({
  seq: 1,
  decisionId: "dec_1",
  decidedAt: NOW + 10,
  grantId: "grt_root",
  actionId: "refund.issue",
  toolName: "issue_refund",
  callId: "c1",
  decision: "allow",
  ...over,
});

describe("recompose", () => {
  it("makes the same grant again under the same policy: ids, times and lists as issued", () => {
    const issued = compose(request, policy, catalog, NOW, "grt_root");
    if (issued.kind !== "granted") throw new Error(issued.kind);
    expect(recompose([root], policy, catalog)).toStrictEqual({ ok: true, grant: issued.grant });
  });

  it("narrows a delegated grant again as it was delegated, under the candidate's root", () => {
    const spec = { subject: "agent:child", allowed: ["email.read"] };
    const child: OriginLink = {
      grantId: "grt_child",
      issuedAt: NOW + 5,
      origin: { kind: "delegated", spec },
    };
    const made = recompose([root, child], LOWERED, catalog);
    if (!made.ok) throw new Error(made.code);
    expect(made.grant).toMatchObject({
      id: "grt_child",
      parentId: "grt_root",
      chain: ["grt_root"],
      allowed: ["email.read"],
    });
    const parent = recompose([root], LOWERED, catalog);
    if (!parent.ok) throw new Error(parent.code);
    const direct = delegate(parent.grant, spec, catalog, NOW + 5, "grt_child");
    expect(direct).toStrictEqual({ kind: "granted", grant: made.grant });
  });

  it("refuses what the candidate would not issue, naming why", () => {
    const gone = {
      ...root,
      origin: { kind: "composed", request: { ...request, profile: "nope" } },
    };
    expect(recompose([gone as OriginLink], policy, catalog)).toMatchObject({
      ok: false,
      code: "UNKNOWN_PROFILE",
    });
    expect(recompose([], policy, catalog)).toMatchObject({ ok: false, code: "NO_ORIGIN" });
  });
});

describe("replayDecision", () => {
  const same = recompose([root], policy, catalog);
  const lowered = recompose([root], LOWERED, catalog);
  const live = { policy, catalog };
  const candidate = { policy: LOWERED, catalog };

  it("decides the recorded call again under the candidate, naming the rule that flips it", () => {
    const inputs = { arguments: refund(40) };
    expect(replayDecision(recorded(), inputs, same, live)).toStrictEqual({
      kind: "replayed",
      from: "allow",
      to: "allow",
    });
    expect(replayDecision(recorded(), inputs, lowered, candidate)).toMatchObject({
      kind: "replayed",
      from: "allow",
      to: "require_approval",
      rule: "owner-assistant:refund.issue[1]",
    });
  });

  it("decides on the run the call was decided on (a rule over the run's labels)", () => {
    const run = {
      runId: "r1",
      labels: [{ label: "untrusted", actionId: "web.fetch", toolName: "fetch_url", call: 1 }],
      calls: 1,
      last: {},
      windows: {},
    };
    const out = replayDecision(recorded(), { arguments: refund(40), run }, same, live);
    expect(out).toMatchObject({ kind: "replayed", to: "require_approval" });
    expect(replayDecision(recorded(), { arguments: refund(40) }, same, live)).toMatchObject({
      to: "allow",
    });
  });

  it("never guesses: no grant, state outside the policy, no origin, arguments not retained", () => {
    const inputs = { arguments: refund(40) };
    expect(replayDecision(recorded({ grantId: "" }), inputs, same, live)).toStrictEqual({
      kind: "not_replayable",
      why: "no-grant",
    });
    for (const code of ["LIMIT_EXCEEDED", "APPROVAL_CONSUMED", "APPROVAL_EXPIRED", "STEP_CONFLICT"])
      expect(
        replayDecision(recorded({ decision: "deny", reasonCode: code }), inputs, same, live),
      ).toStrictEqual({ kind: "not_replayable", why: "state" });
    expect(replayDecision(recorded(), inputs, undefined, live)).toStrictEqual({
      kind: "not_replayable",
      why: "no-origin",
    });
    expect(replayDecision(recorded(), undefined, same, live)).toStrictEqual({
      kind: "not_replayable",
      why: "no-inputs",
    });
  });

  it("without inputs, replays what the candidate decides before reading arguments", () => {
    const shell = recorded({
      actionId: "shell.exec",
      toolName: "run_shell",
      decision: "deny",
      reasonCode: "EXPLICIT_DENY",
    });
    expect(replayDecision(shell, undefined, same, live)).toMatchObject({
      kind: "replayed",
      from: "deny",
      to: "deny",
      reasonCode: "EXPLICIT_DENY",
    });
    // After the grant's expiry, whatever the arguments.
    const late = recorded({ decidedAt: NOW + 400 * 24 * 3600 });
    expect(replayDecision(late, undefined, same, live)).toMatchObject({
      to: "deny",
      reasonCode: "GRANT_EXPIRED",
    });
  });

  it("a grant the candidate would not issue replays as a deny with the refusal's code", () => {
    const refused = { ok: false as const, code: "UNKNOWN_PROFILE" as const, message: "gone" };
    expect(replayDecision(recorded(), { arguments: refund(40) }, refused, live)).toStrictEqual({
      kind: "replayed",
      from: "allow",
      to: "deny",
      reasonCode: "UNKNOWN_PROFILE",
    });
  });
});

describe("replayTally", () => {
  it("counts every cell, lists the flips that newly allow first, and ids per flip", () => {
    const tally = replayTally();
    tally.add("d1", { kind: "replayed", from: "allow", to: "allow" });
    tally.add("d2", { kind: "replayed", from: "allow", to: "deny", reasonCode: "NOT_GRANTED" });
    tally.add("d3", { kind: "replayed", from: "allow", to: "deny", rule: "r" });
    tally.add("d4", { kind: "replayed", from: "deny", to: "allow" });
    tally.add("d5", { kind: "not_replayable", why: "no-inputs" });
    expect(tally.report()).toStrictEqual({
      replayed: 4,
      unchanged: 1,
      notReplayable: { count: 1, why: { "no-inputs": 1 } },
      matrix: { "allow -> allow": 1, "allow -> deny": 2, "deny -> allow": 1 },
      flips: [
        { from: "deny", to: "allow", count: 1, decisionIds: ["d4"], because: [] },
        {
          from: "allow",
          to: "deny",
          count: 2,
          decisionIds: ["d2", "d3"],
          because: ["NOT_GRANTED", "r"],
        },
      ],
    });
  });
});
