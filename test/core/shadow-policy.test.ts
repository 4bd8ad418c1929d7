import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { compose } from "../../src/core/compose.js";
import { delegate } from "../../src/core/delegate.js";
import type { TaskGrant } from "../../src/core/grant.js";
import { buildPolicy, type Policy } from "../../src/core/policy.js";
import { shadowFlipOf, shadowGrantOf, type ShadowGrant } from "../../src/core/shadow-policy.js";
import { parseDocumentText } from "../../src/load/documents.js";
import { demoPair } from "../support/demo.js";

const NOW = 1_767_225_600;
const POLICY_TEXT = readFileSync(new URL("../../fixtures/policy.yaml", import.meta.url), "utf8");
const { catalog, policy: live } = demoPair();

/** The demo policy with `edit` applied to its text, as a candidate. */
function candidate(edit: (text: string) => string): Policy {
  const text = edit(POLICY_TEXT).replace('version: "demo-policy-1"', 'version: "candidate-1"');
  return buildPolicy(parseDocumentText(text, "candidate.yaml"), catalog, "candidate.yaml");
}
const denyingWebSearch = candidate((t) =>
  t.replace("deny: [shell.exec, files.delete]", "deny: [shell.exec, files.delete, web.search]"),
);
const refundsAbove30NeedApproval = candidate((t) =>
  t.replace("amount: { exclusiveMinimum: 100 }", "amount: { exclusiveMinimum: 30 }"),
);

function issue(profile: string, requestedActions?: string[]): TaskGrant {
  const composed = compose(
    {
      profile,
      subject: "agent:a",
      owner: "ana@example.com",
      purpose: "shadow",
      ...(requestedActions === undefined ? {} : { requestedActions }),
    },
    live,
    catalog,
    NOW,
    "grt_live",
  );
  if (composed.kind !== "granted") throw new Error(JSON.stringify(composed));
  return composed.grant;
}

const call = (toolName: string, args: object) => ({ callId: "c1", toolName, arguments: args });
const granted = (s: ShadowGrant): TaskGrant => {
  if (s.kind !== "granted") throw new Error(`refused: ${s.code}`);
  return s.grant;
};

describe("shadowGrantOf()", () => {
  it("recomposes a root grant under a candidate equal to the live policy into the same grant", () => {
    const grant = issue("owner-assistant");
    expect(granted(shadowGrantOf(grant, live, live, catalog))).toStrictEqual(grant);
    const narrow = issue("owner-assistant", ["web.search", "email.delete"]);
    expect(granted(shadowGrantOf(narrow, live, live, catalog))).toStrictEqual(narrow);
  });

  it("asks the candidate for the whole profile only when the grant holds the whole profile", () => {
    const whole = granted(shadowGrantOf(issue("owner-assistant"), live, denyingWebSearch, catalog));
    expect(whole.denied).toContain("web.search");
    expect(whole.allowed).not.toContain("web.search");
    expect(whole.allowed).toContain("email.read");
    const narrow = issue("owner-assistant", ["web.search", "email.read"]);
    const shadow = granted(shadowGrantOf(narrow, live, denyingWebSearch, catalog));
    expect(shadow.allowed).toEqual(["email.read"]);
    expect(shadow.approvalRequired).toEqual([]);
  });

  it("keeps the grant's id, owner, subject, issue time and lifetime", () => {
    const grant = issue("owner-assistant");
    const shadow = granted(shadowGrantOf(grant, live, denyingWebSearch, catalog));
    expect(shadow).toMatchObject({
      id: grant.id,
      subject: grant.subject,
      owner: grant.owner,
      purpose: grant.purpose,
      issuedAt: grant.issuedAt,
      expiresAt: grant.expiresAt,
      mode: grant.mode,
    });
  });

  it("refuses with compose's code when the candidate cannot compose the grant", () => {
    const noProfile = candidate((t) =>
      t.replace("  email-drafter:\n    description:", "  other-drafter:\n    description:"),
    );
    expect(shadowGrantOf(issue("email-drafter"), live, noProfile, catalog)).toMatchObject({
      kind: "refused",
      code: "UNKNOWN_PROFILE",
    });
  });

  it("narrows the candidate's grant to a delegated grant's lists, adding its caveats", () => {
    const root = issue("owner-assistant");
    const child = delegate(
      root,
      { subject: "agent:child", allowed: ["web.search", "email.read"] },
      catalog,
      NOW + 10,
      "grt_child",
    );
    if (child.kind !== "granted") throw new Error(child.code);
    const same = granted(shadowGrantOf(child.grant, live, live, catalog));
    expect(same.allowed).toEqual(child.grant.allowed);
    expect(same).toMatchObject({ id: "grt_child", chain: ["grt_live"], rootId: "grt_live" });
    const shadow = granted(shadowGrantOf(child.grant, live, denyingWebSearch, catalog));
    expect(shadow.allowed).toEqual(["email.read"]);
    expect(shadow.denied).toContain("web.search");
  });
});

describe("shadowFlipOf()", () => {
  const grant = issue("owner-assistant");
  const decideUnder = (candidatePolicy: Policy, toolName: string, args: object, from: string) =>
    shadowFlipOf(
      from as "allow",
      shadowGrantOf(grant, live, candidatePolicy, catalog),
      catalog,
      call(toolName, args),
      { now: NOW + 1 },
    );

  it("is a flip where the candidate decides otherwise, naming its reason", () => {
    expect(decideUnder(denyingWebSearch, "web_search", { query: "q" }, "allow")).toStrictEqual({
      to: "deny",
      reasonCode: "EXPLICIT_DENY",
    });
  });

  it("names the rule that made the candidate's verdict", () => {
    const refund = { order_id: "ord_A1B2C3", amount: 40, currency: "EUR", reason: "other" };
    expect(decideUnder(refundsAbove30NeedApproval, "issue_refund", refund, "allow")).toStrictEqual({
      to: "require_approval",
      rule: "owner-assistant:refund.issue[1]",
    });
  });

  it("is no flip where the candidate agrees", () => {
    expect(
      decideUnder(denyingWebSearch, "read_email", { message_id: "msg_7f3a9c21" }, "allow"),
    ).toBe(undefined);
    expect(decideUnder(live, "web_search", { query: "q" }, "allow")).toBe(undefined);
  });

  it("denies every call of a grant the candidate cannot compose, with compose's code", () => {
    const refused: ShadowGrant = { kind: "refused", code: "SOURCE_SUSPENDED", message: "m" };
    const flip = (from: "allow" | "deny") =>
      shadowFlipOf(from, refused, catalog, call("web_search", { query: "q" }), { now: NOW });
    expect(flip("allow")).toStrictEqual({ to: "deny", reasonCode: "SOURCE_SUSPENDED" });
    expect(flip("deny")).toBe(undefined);
  });
});
