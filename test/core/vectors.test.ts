import { describe, expect, it } from "vitest";
import {
  callDigest,
  compose,
  decide,
  decideInForce,
  delegate,
  projectCatalog,
  type ApprovalRecord,
  type ComposeRequest,
  type DecideContext,
  type DelegationSpec,
  type ToolCall,
} from "../../src/core/index.js";
import {
  catalogOf,
  delegateAll,
  grantOf,
  policyOf,
  readVectors,
  substitute,
  type Vector,
} from "../support/vectors.js";

/** Every string listed in `absent` is missing from the serialized result. */
function expectAbsent(vector: Vector, result: unknown): void {
  const text = JSON.stringify(result);
  for (const s of vector.absent ?? [])
    expect(text, `${vector.file}: "${s}" must not appear`).not.toContain(s);
}

describe("golden vectors", () => {
  it("number at least 60", () => {
    const total = ["compose", "delegate", "project", "decide"].reduce(
      (n, k) => n + readVectors(k).length,
      0,
    );
    expect(total).toBeGreaterThanOrEqual(60);
  });
});

describe("compose()", () => {
  it.each(readVectors("compose").map((v) => [v.name, v] as const))("%s", (_name, v) => {
    const catalog = catalogOf(v.input["catalog"]);
    // A policy may be checked against an older catalog, to show what compose does when actions disappear.
    const policy = policyOf(
      v.input["policy"],
      v.input["policyCatalog"] === undefined ? catalog : catalogOf(v.input["policyCatalog"]),
    );
    const run = () =>
      compose(
        v.input["request"] as ComposeRequest,
        policy,
        catalog,
        v.input["now"] as number,
        v.input["id"] as string,
      );
    const result = run();
    expect(result).toMatchObject(v.expected as object);
    expect(JSON.stringify(run())).toBe(JSON.stringify(result));
    expectAbsent(v, result);
  });
});

describe("delegate()", () => {
  it.each(readVectors("delegate").map((v) => [v.name, v] as const))("%s", (_name, v) => {
    const catalog = catalogOf(v.input["catalog"]);
    const policy =
      v.input["policy"] === undefined ? undefined : policyOf(v.input["policy"], catalog);
    const steps = v.input["delegations"] as { spec: DelegationSpec; now: number; id: string }[];
    const last = steps.at(-1);
    if (!last) throw new Error(`${v.file}: no delegation step`);
    const parent = delegateAll(
      grantOf(v.input["parent"], catalog, policy),
      steps.slice(0, -1),
      catalog,
    );
    const result = delegate(parent, last.spec, catalog, last.now, last.id);
    expect(result).toMatchObject(v.expected as object);
    expectAbsent(v, result);
  });
});

describe("projectCatalog()", () => {
  it.each(readVectors("project").map((v) => [v.name, v] as const))("%s", (_name, v) => {
    const catalog = catalogOf(v.input["catalog"]);
    const policy =
      v.input["policy"] === undefined ? undefined : policyOf(v.input["policy"], catalog);
    const view = projectCatalog(grantOf(v.input["grant"], catalog, policy), catalog);
    expect(view).toMatchObject(v.expected as object);
    expectAbsent(v, view);
  });
});

describe("decide()", () => {
  it.each(readVectors("decide").map((v) => [v.name, v] as const))("%s", (_name, v) => {
    const catalog = catalogOf(v.input["catalog"]);
    const policy =
      v.input["policy"] === undefined ? undefined : policyOf(v.input["policy"], catalog);
    const grant = grantOf(v.input["grant"], catalog, policy);
    const call = v.input["call"] as ToolCall;
    // A start-agent vector's delegated grant is built like the grant: `{compose, delegations}`.
    const raw = v.input["ctx"] as {
      now: number;
      approval?: ApprovalRecord;
      delegatedGrant?: unknown;
    };
    const { delegatedGrant, ...rest } = raw;
    const ctx: DecideContext =
      delegatedGrant === undefined
        ? rest
        : { ...rest, delegatedGrant: grantOf(delegatedGrant, catalog, policy) };
    // "$digest" stands for this call's digest, computed from the action the vector expects.
    const expected = v.expected as { actionId?: string };
    const digest = callDigest(
      grant.id,
      expected.actionId || call.actionId || call.toolName || "",
      call.arguments,
    );
    const verdict = decide(grant, catalog, call, substitute(ctx, "$digest", digest) as typeof ctx);
    expect(verdict).toMatchObject(substitute(v.expected, "$digest", digest) as object);
    expectAbsent(v, verdict);
  });
});

describe("decideInForce()", () => {
  it.each(readVectors("withdraw").map((v) => [v.name, v] as const))("%s", (_name, v) => {
    const catalog = catalogOf(v.input["catalog"]);
    const grant = grantOf(v.input["grant"], catalog, policyOf(v.input["policy"], catalog));
    const policyNow = policyOf(v.input["policyNow"], catalog);
    const call = v.input["call"] as ToolCall;
    const expected = v.expected as { actionId?: string };
    const digest = callDigest(
      grant.id,
      expected.actionId || call.actionId || call.toolName || "",
      call.arguments,
    );
    const verdict = decideInForce(
      grant,
      catalog,
      policyNow,
      call,
      v.input["ctx"] as { now: number },
    );
    expect(verdict).toMatchObject(substitute(v.expected, "$digest", digest) as object);
    // What the pure decide says under the grant alone: a withdrawal only ever turns a verdict into a deny.
    const alone = decide(grant, catalog, call, v.input["ctx"] as { now: number });
    if (verdict.decision !== alone.decision) expect(verdict.decision).toBe("deny");
  });
});
