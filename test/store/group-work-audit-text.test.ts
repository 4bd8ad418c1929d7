import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/core/digest.js";
import { auditEntryJson, nextAuditRow } from "../../src/store/audit-row.js";
import { decisionAudit, decisionAuditText } from "../../src/store/decision-row.js";
import type { DecisionRecord } from "../../src/store/port.js";
import { makeDecision } from "./fixtures.js";

/** Strings with what JSON escapes: quotes, backslashes, control characters, lone and paired surrogates. */
const text = fc.oneof(
  fc.string({ unit: "binary" }),
  fc.string({
    unit: fc.constantFrom(
      '"',
      "\\",
      "\u0000",
      "\u001f",
      "\u007f",
      "\u2028",
      "\ud800",
      "\udc00",
      "\ud83d\ude00",
      "é",
      "a",
    ),
  }),
  fc.constantFrom("", "allow", "deny", "LIMIT_EXCEEDED"),
);
const optional = fc.option(text, { nil: undefined });

/** Any decision record as the type allows it, every optional field present or absent. */
const record = fc.record({
  decisionId: text,
  decidedAt: fc.oneof(fc.integer(), fc.maxSafeInteger(), fc.constantFrom(0, -0, 1_750_000_010)),
  grantId: text,
  rootId: text,
  subject: text,
  actionId: text,
  toolName: text,
  callId: text,
  callDigest: text,
  decision: fc.constantFrom("allow", "deny", "require_approval", "effect_suppressed"),
  reasonCode: optional,
  approvalId: optional,
  catalogVersion: text,
  policyVersion: text,
  caller: optional,
  runId: optional,
  stepKey: optional,
  runLabels: fc.option(fc.array(text, { maxLength: 4 }), { nil: undefined }),
  rule: optional,
  shadowPolicyVersion: optional,
  shadowFlip: fc.option(
    fc.record({ to: text, reasonCode: optional, rule: optional }, { requiredKeys: ["to"] }),
    { nil: undefined },
  ),
}) as fc.Arbitrary<DecisionRecord>;

/** What the chain wrote before: the generic text of decisionAudit's fields. */
const generic = (r: DecisionRecord, seq: number) => auditEntryJson({ ...decisionAudit(r), seq });

describe("decisionAuditText()", () => {
  it("writes auditEntryJson's text of decisionAudit, byte for byte, for any record", () => {
    fc.assert(
      fc.property(record, fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), (r, seq) => {
        const written = decisionAuditText(r)(seq);
        expect(written).toBe(generic(r, seq));
        expect(written).toBe(canonicalJson({ ...decisionAudit(r), seq }));
      }),
      { numRuns: 3000 },
    );
  });

  it("leaves a record holding what its type does not allow to auditEntryJson: the same text, or the same refusal", () => {
    const odd = fc.oneof(
      fc.constant(undefined),
      fc.constant(null),
      fc.integer(),
      fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY),
      fc.boolean(),
    );
    const field = fc.constantFrom(
      ...(Object.keys(makeDecision("d")) as (keyof DecisionRecord)[]),
      "reasonCode",
      "stepKey",
      "caller",
      "runLabels",
      "rule",
      "shadowPolicyVersion",
      "shadowFlip",
    );
    fc.assert(
      fc.property(record, field, odd, (r, k, v) => {
        const bent: DecisionRecord = { ...r, [k]: v };
        let expected: string | undefined;
        try {
          expected = generic(bent, 7);
        } catch {
          expected = undefined;
        }
        if (expected === undefined) expect(() => decisionAuditText(bent)(7)).toThrow();
        else expect(decisionAuditText(bent)(7)).toBe(expected);
      }),
      { numRuns: 2000 },
    );
  });

  it("writes a shadow flip as a nested object in key order, with only the fields it has", () => {
    const r = makeDecision("dec-2", {
      shadowPolicyVersion: "v2",
      shadowFlip: { to: "deny", reasonCode: "EXPLICIT_DENY" },
    });
    const written = decisionAuditText(r)(3);
    expect(written).toContain(
      `"shadowFlip":{"reasonCode":"EXPLICIT_DENY","to":"deny"},"shadowPolicyVersion":"v2"`,
    );
    expect(written).toBe(generic(r, 3));
    expect(decisionAuditText(makeDecision("dec-3"))(3)).not.toContain("shadow");
  });

  it("chains the same row as the record's fields do", () => {
    const head = { seq: 41, hash: "ab".repeat(32) };
    const r = makeDecision("dec-1", {
      reasonCode: "LIMIT_EXCEEDED",
      decision: "deny",
      caller: "gateway",
      runId: "run-1",
      stepKey: 'step "1"',
      runLabels: ["untrusted", "private"],
      rule: "no-exfiltration",
      shadowPolicyVersion: "2026-02-01",
      shadowFlip: { to: "require_approval", reasonCode: "RUN_RULE", rule: "base:email.send[0]" },
    });
    expect(nextAuditRow(head, decisionAuditText(r))).toEqual(nextAuditRow(head, decisionAudit(r)));
    expect(nextAuditRow(undefined, decisionAuditText(r))).toEqual(
      nextAuditRow(undefined, decisionAudit(r)),
    );
  });
});
