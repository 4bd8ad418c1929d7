import { describe, expect, it } from "vitest";
import { boundsAccept, endorsersFor, type Endorsement } from "../../src/core/endorsement.js";
import { demoPair } from "../support/demo.js";

const { catalog } = demoPair();
const NOW = 1_750_000_000;
const CALL = {
  grantId: "g1",
  actionId: "payment.charge",
  requirement: "owner",
  args: { amount: 10 },
};

function e(id: string, overrides: Partial<Endorsement> = {}): Endorsement {
  return {
    id,
    grantId: "g1",
    owner: "ana",
    subject: "agent",
    actionId: "payment.charge",
    requirement: "owner",
    boundsJson: '{"properties":{"amount":{"maximum":50}}}',
    maxCalls: 3,
    usedCalls: 0,
    createdAt: NOW - 10,
    expiresAt: NOW + 600,
    endorsedBy: "ana",
    approvalId: "apr_1",
    status: "active",
    ...overrides,
  };
}

const pick = (list: Endorsement[], needed = 1, may = (_: string) => true) =>
  endorsersFor(catalog, list, CALL, needed, NOW, may).map((x) => x.id);

describe("endorsersFor()", () => {
  it("picks a live endorsement of exactly the call's grant, action and requirement", () => {
    expect(pick([e("end_a")])).toEqual(["end_a"]);
    expect(pick([e("end_g", { grantId: "g-child" })])).toEqual([]);
    expect(pick([e("end_c", { actionId: "refund.issue" })])).toEqual([]);
    expect(pick([e("end_r", { requirement: "manager" })])).toEqual([]);
  });

  it("picks one only for a call held the way the endorsed call was (the same rule over the run, or none)", () => {
    expect(pick([e("end_r", { rule: "no-writes-after-untrusted" })])).toEqual([]);
    const held = { ...CALL, rule: "no-writes-after-untrusted" };
    const ruled = e("end_r", { rule: "no-writes-after-untrusted" });
    expect(endorsersFor(catalog, [ruled], held, 1, NOW, () => true)).toEqual([ruled]);
    expect(endorsersFor(catalog, [e("end_a")], held, 1, NOW, () => true)).toEqual([]);
  });

  it("never picks one revoked, expired, spent, or whose bounds refuse the arguments", () => {
    expect(pick([e("end_x", { status: "revoked" })])).toEqual([]);
    expect(pick([e("end_x", { expiresAt: NOW })])).toEqual([]);
    expect(pick([e("end_x", { usedCalls: 3 })])).toEqual([]);
    expect(pick([e("end_x", { boundsJson: '{"properties":{"amount":{"maximum":5}}}' })])).toEqual(
      [],
    );
    expect(pick([e("end_x", { boundsJson: "not json" })])).toEqual([]);
  });

  it("needs as many distinct endorsers as the requirement's approvers, each still allowed", () => {
    const two = [e("end_1", { endorsedBy: "m1" }), e("end_1b", { endorsedBy: "m1" })];
    expect(pick(two, 2)).toEqual([]);
    const both = [...two, e("end_2", { endorsedBy: "m2" })];
    expect(pick(both, 2)).toEqual(["end_1", "end_2"]);
    expect(pick(both, 2, (who) => who !== "m2")).toEqual([]);
  });
});

describe("boundsAccept()", () => {
  it("fails closed on a schema it cannot compile", () => {
    expect(boundsAccept(catalog, { type: "no-such-type" }, {})).toBe(false);
    expect(boundsAccept(catalog, { required: ["amount"] }, { amount: 1 })).toBe(true);
  });
});
