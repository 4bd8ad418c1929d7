import { randomBytes } from "node:crypto";
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROLES, createApiKey, revokeApiKey, type Role } from "../../src/authority/index.js";
import { ACCESS_TABLE, accessOf, type Access } from "../../src/server/access.js";
import { CONTRACT_FILES } from "../../src/server/services.js";
import { callRaw, type Answer } from "../support/credentials.js";
import { startTestCharter, type TestCharter } from "../support/charter-server.js";

// Every RPC of every generated Charter service × every kind of credential, against the real
// server. The RPC list comes from the generated descriptors, so a new RPC is in the table at once
// (and without an access rule it fails "has a rule for every RPC").

const METHODS = CONTRACT_FILES.flatMap((f) => f.services).flatMap((service) =>
  service.methods.map((method) => ({ service, method })),
);

let charter: TestCharter;
let address: string;
/** A valid key per role, and one revoked key per role. */
const keys = new Map<Role, string>();
const revoked = new Map<Role, string>();

beforeAll(async () => {
  charter = await startTestCharter();
  address = `127.0.0.1:${charter.server.port}`;
  const ctx = charter.server.context;
  for (const role of ROLES) {
    keys.set(role, (await createApiKey(ctx, { principal: `p-${role}`, roles: [role] })).secret);
    const gone = await createApiKey(ctx, { principal: `gone-${role}`, roles: [role] });
    await revokeApiKey(ctx, gone.key.id);
    revoked.set(role, gone.secret);
  }
});
afterAll(async () => {
  await charter.stop();
});

const bearer = (secret: string) => `Bearer ${secret}`;
const key = (role: Role) => bearer(keys.get(role) ?? "");

/** A role the rule does not admit (never admin), or undefined when every role is admitted. */
function outsider(access: Access): Role | undefined {
  if (access.kind !== "roles") return undefined;
  return ROLES.find((r) => r !== "admin" && !access.roles.includes(r));
}

const CASES = [
  "no credentials",
  "wrong key",
  "revoked key",
  "malformed header",
  "valid key without the role",
  "valid key with the role",
  "admin key",
] as const;
type Case = (typeof CASES)[number];

function authorization(access: Access, c: Case): string | undefined {
  const needed: Role = access.kind === "roles" ? (access.roles[0] as Role) : "gateway";
  switch (c) {
    case "no credentials":
      return undefined;
    case "wrong key":
      return bearer(`chk_${randomBytes(32).toString("base64url")}`);
    case "revoked key":
      return bearer(revoked.get(needed) ?? "");
    case "malformed header":
      return `Basic ${keys.get(needed) ?? ""}`;
    case "valid key without the role":
      return key(outsider(access) ?? needed);
    case "valid key with the role":
      return key(needed);
    case "admin key":
      return key("admin");
  }
}

/** What a caller in case `c` must get for an RPC with rule `access`; "served" = past authentication. */
function expected(access: Access, c: Case): number | "served" {
  if (access.kind !== "roles") return "served";
  switch (c) {
    case "no credentials":
    case "wrong key":
    case "revoked key":
    case "malformed header":
      return status.UNAUTHENTICATED;
    case "valid key without the role":
      return outsider(access) === undefined ? "served" : status.PERMISSION_DENIED;
    case "valid key with the role":
    case "admin key":
      return "served";
  }
}

describe("the access table", () => {
  it("has a rule for every RPC of every Charter service, and none for an RPC that does not exist", () => {
    const missing = METHODS.filter(
      ({ service, method }) => accessOf(service, method) === undefined,
    ).map(({ method }) => method.name);
    expect(missing).toEqual([]);
    const ruled = ACCESS_TABLE.flatMap(([service, rules]) =>
      Object.keys(rules).map((local) => `${service.typeName}.${local}`),
    );
    expect(ruled.sort()).toEqual(
      METHODS.map(({ service, method }) => `${service.typeName}.${method.localName}`).sort(),
    );
  });
});

describe.each(
  METHODS.map(
    ({ service, method }) => [`${service.name}.${method.name}`, service, method] as const,
  ),
)("%s", (_name, service, method) => {
  const access = accessOf(service, method) as Access;
  const path = `/${service.typeName}/${method.name}`;
  const streaming = method.methodKind === "server_streaming";

  it.each(CASES)("with %s", async (c) => {
    const answer: Answer = await callRaw(address, path, {
      streaming,
      // A served stream with nothing to send (WatchApprovals) stays open until its deadline; a
      // refusal comes at once. Past authentication is all this asks, so the wait is short.
      ...(streaming ? { deadlineMs: 1_500 } : {}),
      ...optional("authorization", authorization(access, c)),
    });
    const want = expected(access, c);
    if (want === "served") {
      expect(answer.code, answer.details).not.toBe(status.UNAUTHENTICATED);
      expect(answer.code, answer.details).not.toBe(status.PERMISSION_DENIED);
    } else {
      expect(answer.code, answer.details).toBe(want);
    }
  });
});

describe("refusals say nothing about what exists", () => {
  it("answers GetGrant and RevokeGrant of a real grant and of an unknown id alike, without a key and with the wrong role", async () => {
    const issued = await charter.clients.grants.issueGrant(
      { profile: "owner-assistant", subject: "agent:a", owner: "ana@example.com", purpose: "p" },
      { metadata: { authorization: key("issuer") } },
    );
    const real = issued.grant?.id ?? "";
    for (const rpc of ["GetGrant", "RevokeGrant"]) {
      for (const authz of [undefined, key("gateway")]) {
        const ask = (id: string) =>
          callRaw(address, `/charter.v1.GrantService/${rpc}`, {
            body: grantIdMessage(id),
            ...optional("authorization", authz),
          });
        expect(await ask(real)).toEqual(await ask("grt_does-not-exist"));
      }
    }
    const still = await charter.clients.grants.getGrant(
      { grantId: real },
      { metadata: { authorization: key("auditor") } },
    );
    expect(still.revoked).toBe(false);
  });

  it("sends one message for a missing, a wrong and a revoked key", async () => {
    const path = "/charter.v1.GrantService/IssueGrant";
    const answers = await Promise.all(
      [undefined, bearer("chk_nope"), bearer(revoked.get("issuer") ?? "")].map((a) =>
        callRaw(address, path, optional("authorization", a)),
      ),
    );
    expect(new Set(answers.map((a) => JSON.stringify(a))).size).toBe(1);
    expect(answers[0]).toEqual({
      code: status.UNAUTHENTICATED,
      details:
        "a valid API key is required (metadata authorization: Bearer <key>); an operator creates one on the server's data dir with `charter keys create --principal NAME --role ROLE`",
    });
  });
});

describe("key revocation", () => {
  it("refuses a key at the next call after it is revoked", async () => {
    const ctx = charter.server.context;
    const { key: stored, secret } = await createApiKey(ctx, {
      principal: "orchestrator-x",
      roles: ["issuer"],
    });
    const issue = () =>
      charter.clients.grants.issueGrant(
        { profile: "owner-assistant", subject: "a", owner: "o", purpose: "p" },
        { metadata: { authorization: bearer(secret) } },
      );
    await expect(issue()).resolves.toBeDefined();
    await revokeApiKey(ctx, stored.id);
    await expect(issue()).rejects.toMatchObject({ code: status.UNAUTHENTICATED });
  });
});

/** A GetGrantRequest / RevokeGrantRequest body: field 1, the grant id. */
function grantIdMessage(id: string): Uint8Array {
  const bytes = Buffer.from(id, "utf8");
  return Buffer.concat([Buffer.from([0x0a, bytes.length]), bytes]);
}

function optional<K extends string, V>(name: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [name]: value }) as { [P in K]?: V };
}
