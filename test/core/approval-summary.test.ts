import { describe, expect, it } from "vitest";
import {
  buildCatalog,
  buildPolicy,
  approversFor,
  ownerMayApprove,
  summarizeArguments,
  SUMMARY_STRING_LIMIT,
  type CatalogAction,
  type JsonObject,
} from "../../src/core/index.js";
import { loadErrorOf } from "../support/load-error.js";

const schema: JsonObject = {
  type: "object",
  properties: {
    to: { type: "string" },
    body: { type: "string" },
    card: {
      type: "object",
      properties: { holder: { type: "string" }, pan: { type: "string", writeOnly: true } },
    },
    token: { type: "string", writeOnly: true },
    meta: { type: "object", properties: { tag: { type: "string" }, other: { type: "string" } } },
  },
};

function action(summary: unknown, input: JsonObject = schema): CatalogAction {
  const catalog = buildCatalog(
    {
      version: "v",
      actions: [{ id: "a.b", summary, tool: { name: "ab", description: "d", inputSchema: input } }],
    },
    "c.yaml",
  );
  const found = catalog.actions.get("a.b");
  if (!found) throw new Error("no action");
  return found;
}

describe("summarizeArguments()", () => {
  it("shows listed paths, digests the rest, and shows nothing of writeOnly arguments", () => {
    const s = summarizeArguments(action(["/to", "/meta/tag"]), {
      to: "x@example.com",
      body: "private words",
      card: { holder: "Zoë", pan: "4111111111111111" },
      token: "tok-secret",
      meta: { tag: "t", other: "o" },
    });
    expect(s).toEqual([
      {
        path: "/body",
        shown: "digest",
        digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) as unknown,
      },
      { path: "/card", shown: "hidden" },
      {
        path: "/meta/other",
        shown: "digest",
        digest: expect.stringMatching(/^sha256:/) as unknown,
      },
      { path: "/meta/tag", shown: "value", valueJson: '"t"', truncated: false },
      { path: "/to", shown: "value", valueJson: '"x@example.com"', truncated: false },
      { path: "/token", shown: "hidden" },
    ]);
    const text = JSON.stringify(s);
    for (const secret of ["4111111111111111", "tok-secret", "private words", "Zoë"])
      expect(text).not.toContain(secret);
  });

  it("cuts long strings by code points and marks them truncated", () => {
    const long = "é".repeat(SUMMARY_STRING_LIMIT + 5);
    expect(summarizeArguments(action(["/to"]), { to: long })).toEqual([
      {
        path: "/to",
        shown: "value",
        valueJson: JSON.stringify("é".repeat(SUMMARY_STRING_LIMIT)),
        truncated: true,
      },
    ]);
  });

  it("shows only digests when the action lists no summary", () => {
    const plain = buildCatalog(
      {
        version: "v",
        actions: [{ id: "a.b", tool: { name: "ab", description: "d", inputSchema: schema } }],
      },
      "c.yaml",
    ).actions.get("a.b");
    expect(summarizeArguments(plain as CatalogAction, { to: "x" })).toEqual([
      { path: "/to", shown: "digest", digest: expect.stringMatching(/^sha256:/) as unknown },
    ]);
  });
});

describe("the catalog's summary paths", () => {
  it.each([
    [["/token"], "summary path /token is writeOnly"],
    [["/card"], "summary path /card is writeOnly (or holds a writeOnly value)"],
    [["/card/pan"], "summary path /card/pan is writeOnly"],
    [["/nope"], "summary path /nope names an argument the input schema does not declare"],
    [["to"], 'summary path "to" is not a JSON Pointer'],
    ["/to", "summary must be a list of JSON Pointers"],
  ])("refuses %j at load time", (summary, message) => {
    expect(loadErrorOf(() => action(summary)).message).toContain(message);
  });
});

describe("policy requirements", () => {
  const catalog = buildCatalog({ version: "v", actions: [{ id: "a.b" }] }, "c.yaml");
  it("reads distinct-approver counts; an unlisted requirement needs one", () => {
    const policy = buildPolicy(
      { version: "p", requirements: { manager: { approvers: 2 } }, sources: {}, profiles: {} },
      catalog,
      "p.yaml",
    );
    expect(approversFor(policy, "manager")).toBe(2);
    expect(approversFor(policy, "owner")).toBe(1);
    expect(ownerMayApprove(policy, "manager")).toBe(false);
    expect(ownerMayApprove(policy, "owner")).toBe(true);
  });
  it("lets the owner approve a requirement only when it says owner: true", () => {
    const policy = buildPolicy(
      {
        version: "p",
        requirements: { lead: { approvers: 2, owner: true }, manager: { approvers: 2 } },
        sources: {},
        profiles: {},
      },
      catalog,
      "p.yaml",
    );
    expect(ownerMayApprove(policy, "lead")).toBe(true);
    expect(ownerMayApprove(policy, "manager")).toBe(false);
  });
  it.each([
    { manager: { approvers: 0 } },
    { manager: { approvers: 17 } },
    { manager: 2 },
    { manager: { approvers: 2, extra: 1 } },
    { manager: { approvers: 2, owner: "yes" } },
  ])("refuses %j", (requirements) => {
    expect(
      loadErrorOf(() =>
        buildPolicy({ version: "p", requirements, sources: {}, profiles: {} }, catalog, "p.yaml"),
      ).message,
    ).toContain("a requirement is {approvers: n, owner?: true|false}");
  });
});
