import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { auditLinkProblem, chainHash, GENESIS_HASH } from "../../src/core/audit-chain.js";
import { nextAuditRow } from "../../src/store/audit-row.js";
import { nativeSha256Hex } from "../../src/store/sha256.js";

describe("the audit chain's native hash", () => {
  it("gives the chain hash the core's pure-JS sha256 gives, for any text", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), (entry) => {
        expect(chainHash(GENESIS_HASH, entry, nativeSha256Hex)).toBe(
          chainHash(GENESIS_HASH, entry),
        );
      }),
      { numRuns: 500 },
    );
  });

  it("appends records that the pure-JS check accepts (a known vector too)", () => {
    const first = nextAuditRow(undefined, {
      at: 1,
      kind: "grant.revoked",
      grantId: "g-1",
      rootId: "g-1",
      subject: "agent:é\ud800",
    });
    expect(auditLinkProblem({ seq: 0, hash: GENESIS_HASH }, first)).toBeUndefined();
    const second = nextAuditRow(first, {
      at: 2,
      kind: "grant.revoked",
      grantId: "g-2",
      rootId: "g-1",
      subject: "agent:x",
    });
    expect(auditLinkProblem(first, second)).toBeUndefined();
    // sha256 of 64 zeros, a newline and "{}" (coreutils sha256sum).
    expect(chainHash(GENESIS_HASH, "{}", nativeSha256Hex)).toBe(
      "5649d09ed68c17156095d175eef152856c5b1a81c117c409c1e00f096aa6838e",
    );
  });
});
