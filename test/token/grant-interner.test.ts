import { describe, expect, it } from "vitest";
import { ENTRY_BASE_BYTES, GrantInterner } from "../../src/token/grant-interner.js";
import { sampleGrant } from "./fixtures.js";

describe("GrantInterner", () => {
  it("keeps the grant equal, deep-frozen, with what grants hold alike shared", () => {
    const interner = new GrantInterner(1 << 20);
    const a = interner.compact(sampleGrant());
    const b = interner.compact(sampleGrant({ id: "grant-2", rootId: "grant-2" }));
    expect(a.grant).toEqual(sampleGrant());
    expect(
      Object.isFrozen(a.grant) &&
        Object.isFrozen(a.grant.allowed) &&
        Object.isFrozen(a.grant.caveats["email.send"]?.rules[0]),
    ).toBe(true);
    expect(b.grant.caveats["email.send"]).toBe(a.grant.caveats["email.send"]);
    expect(interner.bytes).toBeGreaterThan(0);
    expect(b.bytes).toBeGreaterThanOrEqual(ENTRY_BASE_BYTES);
  });

  it("stops sharing at its byte bound and counts what it could not share to the grant", () => {
    const roomy = new GrantInterner(1 << 20).compact(sampleGrant());
    const full = new GrantInterner(0);
    const alone = full.compact(sampleGrant());
    expect(full.bytes).toBe(0);
    expect(alone.grant).toEqual(sampleGrant());
    expect(alone.bytes).toBeGreaterThan(roomy.bytes);
  });

  it("keeps members it does not know, counted by their text", () => {
    const withExtra = { ...sampleGrant(), targets: ["x".repeat(1000)] } as unknown as ReturnType<
      typeof sampleGrant
    >;
    const compact = new GrantInterner(1 << 20).compact(withExtra);
    expect(compact.grant).toEqual(withExtra);
    expect(compact.bytes).toBeGreaterThan(
      new GrantInterner(1 << 20).compact(sampleGrant()).bytes + 2000,
    );
  });
});
