import { create } from "@bufbuild/protobuf";
import { status, type ServiceError } from "@grpc/grpc-js";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { delegateGrant, isAuthorityError } from "../../src/authority/index.js";
import { errorDetails } from "../../src/client/index.js";
import { REFUSAL_CODES } from "../../src/core/delegate.js";
import {
  ActionCaveatsSchema,
  Decision,
  GrantMode,
  LimitsSchema,
  type Grant,
} from "../../src/gen/charter/v1/common_pb.js";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { DelegateGrantRequestSchema } from "../../src/gen/charter/v1/grant_pb.js";
import { startTestCharter, type TestCharter } from "../support/charter-server.js";

// DelegateGrant over RPC (protected mode: the local operator may call it). A child only narrows;
// every refusal is FAILED_PRECONDITION with the refusal code as ErrorInfo.reason.

let charter: TestCharter;
beforeAll(async () => {
  charter = await startTestCharter();
});
afterAll(async () => {
  await charter.stop();
});

type DelegateInit = MessageInitShape<typeof DelegateGrantRequestSchema>;

async function issue(profile = "owner-assistant"): Promise<{ grant: Grant; token: string }> {
  const r = await charter.clients.grants.issueGrant({
    profile,
    subject: "agent:root",
    owner: "ana@example.com",
    purpose: "root task",
  });
  if (!r.grant) throw new Error("no grant");
  return { grant: r.grant, token: r.grantToken };
}

async function delegate(req: DelegateInit): Promise<{ grant: Grant; token: string }> {
  const r = await charter.clients.grants.delegateGrant(req);
  if (!r.grant) throw new Error("no grant");
  return { grant: r.grant, token: r.grantToken };
}

/** The status and ErrorInfo reason a refused DelegateGrant carries. */
async function refusal(
  req: DelegateInit,
): Promise<{ code: number; reason: string | undefined; details: string }> {
  const err = await charter.clients.grants.delegateGrant(req).then(
    () => expect.unreachable("the delegation was granted"),
    (e: unknown) => e as ServiceError,
  );
  return { code: err.code, reason: errorDetails(err).reason, details: err.details };
}

const verdict = async (token: string, tool: string, args: object) =>
  (
    await charter.clients.authority.authorize({
      grantToken: token,
      call: { callId: "c", toolName: tool, argumentsJson: JSON.stringify(args) },
    })
  ).verdict;

describe("a three-level chain", () => {
  it("narrows at every level, carries its chain, and each token authorizes only what its level holds", async () => {
    const root = await issue();
    const child = await delegate({
      parentToken: root.token,
      subject: "agent:child",
      allowedTools: ["web_search", "read_email", "fetch_url"],
      ttlSeconds: 1800n,
      limits: create(LimitsSchema, { maxCalls: 50, maxDelegationDepth: 2 }),
    });
    const grandchild = await delegate({
      parentToken: child.token,
      subject: "agent:grandchild",
      allowed: ["web.search"],
      ttlSeconds: 600n,
      limits: create(LimitsSchema, { maxCalls: 10, maxDelegationDepth: 2 }),
      caveats: { "web.search": create(ActionCaveatsSchema, { bindsJson: '{"query":"charter"}' }) },
    });
    expect(child.grant.allowed).toEqual(["email.read", "web.fetch", "web.search"]);
    expect(grandchild.grant.allowed).toEqual(["web.search"]);
    expect(grandchild.grant.chain).toEqual([root.grant.id, child.grant.id]);
    expect(grandchild.grant.rootId).toBe(root.grant.id);
    expect(
      grandchild.grant.expiresAt <= child.grant.expiresAt &&
        child.grant.expiresAt <= root.grant.expiresAt,
    ).toBe(true);
    expect(grandchild.grant.limits?.maxCalls).toBe(10);

    expect(
      (await verdict(child.token, "read_email", { message_id: "msg_7f3a9c21" }))?.decision,
    ).toBe(Decision.ALLOW);
    expect(
      (await verdict(grandchild.token, "read_email", { message_id: "msg_7f3a9c21" }))?.reason?.code,
    ).toBe("NOT_GRANTED");
    expect((await verdict(grandchild.token, "web_search", { query: "charter" }))?.decision).toBe(
      Decision.ALLOW,
    );
    expect((await verdict(grandchild.token, "web_search", { query: "other" }))?.reason?.code).toBe(
      "CONSTRAINT_VIOLATION",
    );
  });
});

describe("refusals over RPC", () => {
  const cases: readonly (readonly [(typeof REFUSAL_CODES)[number], () => Promise<DelegateInit>])[] =
    [
      [
        "ACTION_NOT_IN_PARENT",
        async () => ({
          parentToken: (await issue()).token,
          subject: "s",
          allowed: ["payment.charge"],
        }),
      ],
      [
        "ACTION_NOT_DELEGABLE",
        async () => ({
          parentToken: (await issue()).token,
          subject: "s",
          allowed: ["refund.issue"],
        }),
      ],
      [
        "EXPIRY_WIDENS",
        async () => ({
          parentToken: (await issue()).token,
          subject: "s",
          allowed: ["web.search"],
          ttlSeconds: 10_000_000n,
        }),
      ],
      [
        "LIMIT_WIDENS",
        async () => ({
          parentToken: (await issue()).token,
          subject: "s",
          allowed: ["web.search"],
          limits: create(LimitsSchema, { maxCalls: 1_000, maxDelegationDepth: 1 }),
        }),
      ],
      [
        "DEPTH_EXCEEDED",
        async () => {
          const root = await issue();
          const one = await delegate({
            parentToken: root.token,
            subject: "one",
            allowed: ["web.search"],
          });
          const two = await delegate({
            parentToken: one.token,
            subject: "two",
            allowed: ["web.search"],
          });
          return { parentToken: two.token, subject: "three", allowed: ["web.search"] };
        },
      ],
      [
        "BIND_CONFLICT",
        async () => {
          const bound = await delegate({
            parentToken: (await issue()).token,
            subject: "bound",
            allowed: ["web.search"],
            caveats: { "web.search": create(ActionCaveatsSchema, { bindsJson: '{"query":"a"}' }) },
          });
          return {
            parentToken: bound.token,
            subject: "s",
            allowed: ["web.search"],
            caveats: { "web.search": create(ActionCaveatsSchema, { bindsJson: '{"query":"b"}' }) },
          };
        },
      ],
      [
        "MODE_WIDENS",
        async () => ({
          parentToken: (await issue("owner-assistant-dryrun")).token,
          subject: "s",
          allowed: ["web.search"],
          mode: GrantMode.LIVE,
        }),
      ],
    ];

  it("covers every refusal code", () => {
    expect(cases.map(([code]) => code).sort()).toEqual([...REFUSAL_CODES].sort());
  });

  it.each(cases)(
    "%s is FAILED_PRECONDITION with the code as ErrorInfo.reason",
    async (code, request) => {
      const r = await refusal(await request());
      expect(r).toMatchObject({ code: status.FAILED_PRECONDITION, reason: code });
      expect(r.details.startsWith(`${code}: `)).toBe(true);
    },
  );

  it("refuses a tool the parent does not hold (or that does not exist) and one it may not hand on, by tool name", async () => {
    const { token } = await issue();
    expect(
      await refusal({ parentToken: token, subject: "s", allowedTools: ["run_shell"] }),
    ).toMatchObject({
      code: status.FAILED_PRECONDITION,
      reason: "ACTION_NOT_IN_PARENT",
    });
    expect(
      await refusal({ parentToken: token, subject: "s", allowedTools: ["no_such_tool"] }),
    ).toMatchObject({ reason: "ACTION_NOT_IN_PARENT" });
    expect(
      await refusal({ parentToken: token, subject: "s", allowedTools: ["issue_refund"] }),
    ).toMatchObject({ reason: "ACTION_NOT_DELEGABLE" });
    expect(
      await refusal({ parentToken: token, subject: "s", allowedTools: ["commission_subagent"] }),
    ).toMatchObject({ reason: "ACTION_NOT_DELEGABLE" });
  });

  it("answers UNAUTHENTICATED with the grant refusal for a parent token that does not verify, and for a revoked parent", async () => {
    expect(
      await refusal({ parentToken: "not-a-token", subject: "s", allowed: ["web.search"] }),
    ).toMatchObject({ code: status.UNAUTHENTICATED, reason: "GRANT_INVALID" });
    const root = await issue();
    await charter.clients.grants.revokeGrant({ grantId: root.grant.id, reason: "test" });
    expect(
      await refusal({ parentToken: root.token, subject: "s", allowed: ["web.search"] }),
    ).toMatchObject({ code: status.UNAUTHENTICATED, reason: "GRANT_REVOKED" });
  });

  it("answers INVALID_ARGUMENT naming a caveat that is not JSON", async () => {
    const { token } = await issue();
    const bad: DelegateInit = {
      parentToken: token,
      subject: "s",
      allowed: ["web.search"],
      caveats: { "web.search": create(ActionCaveatsSchema, { bindsJson: "{nope" }) },
    };
    const err = await charter.clients.grants
      .delegateGrant(bad)
      .catch((e: unknown) => e as ServiceError);
    expect(err).toMatchObject({
      code: status.INVALID_ARGUMENT,
      details: 'caveats["web.search"].binds_json: is not JSON',
    });
  });

  it("answers INVALID_ARGUMENT naming a caveat whose pattern RE2 cannot run, and records nothing", async () => {
    const { grant, token } = await issue();
    const schema = (pattern: string) => JSON.stringify({ properties: { query: { pattern } } });
    const cases = [
      {
        caveats: create(ActionCaveatsSchema, { constraintsJson: [schema("^(?=a)a")] }),
        details:
          'caveats["web.search"].constraints_json[0]: is not a usable JSON Schema: /properties/query/pattern: pattern "^(?=a)a" cannot run in linear time (RE2 has no backreferences or lookaround): error parsing regexp: invalid or unsupported Perl syntax: `(?=`',
      },
      {
        caveats: create(ActionCaveatsSchema, {
          rules: [{ whenJson: schema("(a)\\1"), then: { case: "deny", value: "no" } }],
        }),
        details:
          'caveats["web.search"].rules[0].when_json: is not a usable JSON Schema: /properties/query/pattern: pattern "(a)\\\\1" cannot run in linear time (RE2 has no backreferences or lookaround): error parsing regexp: invalid escape sequence: `\\1`',
      },
    ];
    for (const { caveats, details } of cases) {
      const err = await charter.clients.grants
        .delegateGrant({
          parentToken: token,
          subject: "s",
          allowed: ["web.search"],
          caveats: { "web.search": caveats },
        })
        .then(
          () => expect.unreachable("the delegation was granted"),
          (e: unknown) => e as ServiceError,
        );
      expect({ code: err.code, details: err.details }).toEqual({
        code: status.INVALID_ARGUMENT,
        details,
      });
    }
    // No child was recorded: revoking the parent revokes it alone.
    const { revokedIds } = await charter.clients.grants.revokeGrant({
      grantId: grant.id,
      reason: "test",
    });
    expect(revokedIds).toEqual([grant.id]);
  });
});

/** Mostly actions the parents hold and may hand on, sometimes one from `all`, so most specs are granted and some are not. */
function held(all: readonly string[]): fc.Arbitrary<string[]> {
  const usual = ["web.search", "email.read", "files.read", "web.fetch", "audit.note"];
  return fc
    .tuple(fc.subarray(usual), fc.option(fc.constantFrom(...all), { nil: undefined, freq: 3 }))
    .map(([a, extra]) => (extra === undefined ? a : [...a, extra]));
}

describe("a child never gains authority (property, over the application layer)", () => {
  it("holds only parent actions, never a later expiry, a larger limit, a re-bound argument or live mode from shadow", async () => {
    const ctx = charter.server.context;
    const live = await issue();
    const shadow = await issue("owner-assistant-dryrun");
    const bound = await delegate({
      parentToken: live.token,
      subject: "bound",
      allowed: ["web.search", "email.read", "files.read"],
      caveats: { "web.search": create(ActionCaveatsSchema, { bindsJson: '{"query":"fixed"}' }) },
    });
    const parents = [live, shadow, bound];
    let granted = 0;
    const ids = [
      "web.search",
      "email.read",
      "files.read",
      "email.send",
      "payment.charge",
      "shell.exec",
      "refund.issue",
      "calendar.cancel",
      "web.fetch",
      "audit.note",
    ];
    await fc.assert(
      fc.asyncProperty(
        fc.nat({ max: parents.length - 1 }),
        held(ids),
        held(ids),
        fc.option(fc.integer({ min: -1, max: 8_000 }), { nil: undefined }),
        fc.option(fc.integer({ min: -1, max: 400 }), { nil: undefined }),
        fc.option(fc.constantFrom<"live" | "shadow">("live", "shadow"), { nil: undefined }),
        fc.option(fc.constantFrom("fixed", "other"), { nil: undefined }),
        async (p, allowed, approvalRequired, ttlSeconds, maxCalls, mode, rebind) => {
          const parent = parents[p] as (typeof parents)[number];
          const spec = {
            subject: "agent:prop",
            allowed,
            approvalRequired,
            ...(ttlSeconds === undefined ? {} : { ttlSeconds }),
            ...(maxCalls === undefined ? {} : { limits: { maxCalls } }),
            ...(mode === undefined ? {} : { mode }),
            ...(rebind === undefined || !allowed.includes("web.search")
              ? {}
              : { caveats: { "web.search": { binds: { query: rebind } } } }),
          };
          let child;
          try {
            child = (await delegateGrant(ctx, { parentToken: parent.token, spec })).grant;
          } catch (err) {
            if (isAuthorityError(err) && err.code === "FAILED_PRECONDITION") return;
            throw err;
          }
          granted += 1;
          const pg = parent.grant;
          for (const a of child.allowed) expect(pg.allowed).toContain(a);
          for (const a of child.approvalRequired)
            expect([...pg.allowed, ...pg.approvalRequired]).toContain(a);
          expect(child.expiresAt).toBeLessThanOrEqual(Number(pg.expiresAt));
          if (pg.limits?.maxCalls !== undefined)
            expect(child.limits.maxCalls ?? Infinity).toBeLessThanOrEqual(pg.limits.maxCalls);
          expect(child.limits.maxDelegationDepth).toBeLessThanOrEqual(
            pg.limits?.maxDelegationDepth ?? 0,
          );
          if (pg.mode === GrantMode.SHADOW) expect(child.mode).toBe("shadow");
          for (const [actionId, c] of Object.entries(pg.caveats)) {
            const parentBinds = JSON.parse(c.bindsJson || "{}") as Record<string, unknown>;
            if (!child.allowed.includes(actionId) && !child.approvalRequired.includes(actionId))
              continue;
            expect(child.caveats[actionId]?.binds).toMatchObject(parentBinds);
          }
        },
      ),
      { numRuns: 150 },
    );
    // The property must see children, not only refusals.
    expect(granted).toBeGreaterThan(8);
  });
});
