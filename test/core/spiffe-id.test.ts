import { describe, expect, it } from "vitest";
import { parseSpiffeId, parseSpiffeRoles, spiffeRolesOf } from "../../src/core/spiffe-id.js";

describe("parseSpiffeId()", () => {
  it.each([
    ["spiffe://prod.example/ns/agents/sa/gateway", "prod.example", "/ns/agents/sa/gateway"],
    ["spiffe://td_1-x.y/A.b-c_D", "td_1-x.y", "/A.b-c_D"],
    ["spiffe://prod.example", "prod.example", ""],
  ])("reads %s", (text, trustDomain, path) => {
    expect(parseSpiffeId(text)).toEqual({ text, trustDomain, path });
  });

  it.each([
    ["https://prod.example/w", "does not start with spiffe://"],
    ["Spiffe://prod.example/w", "does not start with spiffe://"],
    ["spiffe:prod.example/w", "does not start with spiffe://"],
    ["spiffe://", "has no trust domain"],
    ["spiffe:///w", "has no trust domain"],
    ["spiffe://PROD.example/w", "has a trust domain with other than lowercase"],
    ["spiffe://prod%2eexample/w", "has a trust domain with other than lowercase"],
    ["spiffe://a@prod.example/w", "has userinfo"],
    ["spiffe://prod.example:443/w", "has a port"],
    ["spiffe://prod.example/w?x", "has a query or a fragment"],
    ["spiffe://prod.example/w#x", "has a query or a fragment"],
    ["spiffe://prod.example/", "has an empty path segment (// or a trailing /)"],
    ["spiffe://prod.example/a//b", "has an empty path segment (// or a trailing /)"],
    ["spiffe://prod.example/a/", "has an empty path segment (// or a trailing /)"],
    ["spiffe://prod.example/a/./b", "has a . or .. path segment"],
    ["spiffe://prod.example/..", "has a . or .. path segment"],
    ["spiffe://prod.example/a%20b", "has a path segment with other than letters"],
    ["spiffe://prod.example/caf\u00e9", "has a path segment with other than letters"],
    ["spiffe://prod.example/a b", "has a path segment with other than letters"],
    [`spiffe://${"a".repeat(256)}/w`, "has a trust domain longer than 255 bytes"],
    [`spiffe://prod.example/${"a".repeat(2048)}`, "is longer than 2048 bytes"],
  ])("refuses %s", (text, problem) => {
    expect(parseSpiffeId(text)).toSatisfy(
      (p: unknown) => typeof p === "string" && p.startsWith(problem),
    );
  });

  it("takes an ID of exactly 2048 bytes", () => {
    const text = `spiffe://prod.example/${"a".repeat(2048 - "spiffe://prod.example/".length)}`;
    expect(text).toHaveLength(2048);
    expect(parseSpiffeId(text)).toMatchObject({ text });
  });
});

describe("parseSpiffeRoles()", () => {
  it("reads exact IDs and /* prefixes", () => {
    const roles = parseSpiffeRoles(
      " spiffe://td/a/gw = gateway ; spiffe://td/a/*=issuer,auditor;spiffe://td/*=auditor",
    );
    expect(roles).toEqual({
      exact: new Map([["spiffe://td/a/gw", ["gateway"]]]),
      under: new Map([
        ["spiffe://td/a", ["issuer", "auditor"]],
        ["spiffe://td", ["auditor"]],
      ]),
    });
  });

  it.each([
    ["spiffe://td/a", '"spiffe://td/a" is not spiffe://trust-domain/path=role[,role]'],
    ["=gateway", '"=gateway" is not spiffe://trust-domain/path=role[,role]'],
    ["spiffe://td/a=", '"spiffe://td/a=" is not spiffe://trust-domain/path=role[,role]'],
    ["spiffe://TD/a=gateway", '"spiffe://TD/a=gateway": the SPIFFE ID has a trust domain'],
    ["spiffe://td/a/=gateway", '"spiffe://td/a/=gateway": the SPIFFE ID has an empty path'],
    ["spiffe://td/*/b=gateway", '"spiffe://td/*/b=gateway": the SPIFFE ID has a path segment'],
    ["spiffe://td=gateway", '"spiffe://td=gateway": a workload\'s SPIFFE ID has a path'],
    ["spiffe://td/a=gateway;spiffe://td/a=issuer", '"spiffe://td/a" is listed twice'],
    ["spiffe://td/a/*=gateway;spiffe://td/a/*=issuer", '"spiffe://td/a/*" is listed twice'],
  ])("refuses %s", (text, problem) => {
    expect(parseSpiffeRoles(text)).toSatisfy(
      (p: unknown) => typeof p === "string" && p.startsWith(problem),
    );
  });
});

describe("spiffeRolesOf()", () => {
  const mapping = parseSpiffeRoles(
    "spiffe://td/a/gw=gateway;spiffe://td/a/*=issuer;spiffe://td/a/b/*=auditor;spiffe://other/*=admin",
  );
  const of = (text: string) => {
    const id = parseSpiffeId(text);
    if (typeof mapping === "string" || typeof id === "string") throw new Error("bad fixture");
    return spiffeRolesOf(mapping, id);
  };

  it("prefers the exact entry, then the longest prefix of whole segments", () => {
    expect(of("spiffe://td/a/gw")).toEqual(["gateway"]);
    expect(of("spiffe://td/a/gw2")).toEqual(["issuer"]);
    expect(of("spiffe://td/a/b/c/d")).toEqual(["auditor"]);
    expect(of("spiffe://other/x")).toEqual(["admin"]);
  });

  it("covers nothing else", () => {
    for (const text of [
      "spiffe://td/a",
      "spiffe://td/ab/c",
      "spiffe://td/x",
      "spiffe://td",
      "spiffe://other",
    ])
      expect(of(text)).toBeUndefined();
  });
});
