import { describe, expect, it } from "vitest";
import { NO_CAVEATS, type ActionCaveats } from "../../src/core/index.js";
import { MAX_SAMPLES_PER_ACTION, sampleCalls } from "../../src/core/sample-calls.js";
import { patternSamples } from "../../src/core/sample-values.js";
import { demoPair } from "../support/demo.js";

const { catalog, policy } = demoPair();

/** The caveats every demo source states for an action. */
const demoCaveats = (actionId: string): ActionCaveats[] =>
  [...policy.sources.values()].flatMap((s) => {
    const c = s.caveats.get(actionId);
    return c === undefined ? [] : [c];
  });
const caveat = (c: Partial<ActionCaveats>): ActionCaveats => ({ ...NO_CAVEATS, ...c });
const values = (actionId: string, caveats: readonly ActionCaveats[], name: string) =>
  sampleCalls(catalog, actionId, caveats).map((s) => s.arguments[name]);

describe("sampleCalls()", () => {
  it("gives each side of a rule's numeric bound: amount > 100 gives 99, 100 and 101", () => {
    const amounts = values("refund.issue", demoCaveats("refund.issue"), "amount");
    expect(amounts).toEqual(expect.arrayContaining([99, 100, 101, 4999, 5000, 5001]));
  });

  it("gives a value matching an address pattern and one that does not", () => {
    const rule = {
      when: { properties: { to: { pattern: "@example\\.com$" } } },
      then: "deny" as const,
      reason: "internal only",
      source: "s",
    };
    const to = values("email.send", [caveat({ rules: [rule] })], "to") as string[];
    expect(to.some((t) => t.endsWith("@example.com"))).toBe(true);
    expect(to.some((t) => !t.endsWith("@example.com"))).toBe(true);
  });

  it("gives each member of an enum", () => {
    expect(values("refund.issue", [], "currency")).toEqual(
      expect.arrayContaining(["EUR", "USD", "GBP"]),
    );
  });

  it("makes a call meeting each rule's condition, at the condition's own boundary", () => {
    const rule = {
      when: { required: ["amount"], properties: { amount: { exclusiveMinimum: 500 } } },
      then: "require_approval" as const,
      requirement: "owner",
      source: "s",
    };
    expect(values("refund.issue", [caveat({ rules: [rule] })], "amount")).toContain(501);
  });

  it("keeps a bound argument at its bound value in the base call", () => {
    const [base] = sampleCalls(catalog, "email.send", [
      caveat({ binds: { to: "ana@example.com" } }),
    ]);
    expect(base?.arguments["to"]).toBe("ana@example.com");
  });

  it("every sample of every demo action validates against the tool's input schema, within the cap", () => {
    for (const action of catalog.actions.values()) {
      const samples = sampleCalls(catalog, action.id, demoCaveats(action.id));
      expect(samples.length).toBeGreaterThan(0);
      expect(samples.length).toBeLessThanOrEqual(MAX_SAMPLES_PER_ACTION);
      for (const s of samples) {
        expect(s.actionId).toBe(action.id);
        expect(action.input?.check(s.arguments) ?? []).toEqual([]);
        if (action.input === undefined) expect(s.arguments).toEqual({});
      }
    }
  });

  it("is deterministic and honours a smaller cap", () => {
    const a = sampleCalls(catalog, "refund.issue", demoCaveats("refund.issue"));
    expect(sampleCalls(catalog, "refund.issue", demoCaveats("refund.issue"))).toEqual(a);
    expect(sampleCalls(catalog, "refund.issue", demoCaveats("refund.issue"), 3)).toEqual(
      a.slice(0, 3),
    );
  });

  it("gives nothing for an action the catalog lacks", () => {
    expect(sampleCalls(catalog, "no.such", [])).toEqual([]);
  });
});

describe("patternSamples()", () => {
  it.each([
    ["^ord_[A-Za-z0-9]{6,32}$", "ord_AAAAAA"],
    ["^msg_\\d+$", "msg_0"],
    ["^(?:a|b)c?$", "a"],
  ])("%s gives the shortest match %s first", (pattern, first) => {
    expect(patternSamples(pattern)[0]).toBe(first);
  });

  it("pads a pattern that is not anchored", () => {
    expect(patternSamples("@example\\.com$")).toContain("user@example.com");
  });

  it("gives nothing for a pattern outside the subset it reads (a lookahead)", () => {
    expect(patternSamples("^(?=.*\\d)x$")).toEqual([]);
  });
});
