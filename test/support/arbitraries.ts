import fc from "fast-check";
import {
  buildCatalog,
  buildPolicy,
  callDigest,
  type ApprovalRecord,
  type Catalog,
  type ComposeRequest,
  type DelegationSpec,
  type GrantLimits,
  type GrantMode,
  type JsonObject,
  type JsonSchema,
  type JsonValue,
  type Policy,
  type Rule,
  type TaskGrant,
  type ToolCall,
} from "../../src/core/index.js";

/** fc.jsonValue typed as the core's JsonValue (fast-check's type allows undefined object members it never generates). */
export function jsonArb(
  constraints: Parameters<typeof fc.jsonValue>[0] = {},
): fc.Arbitrary<JsonValue> {
  return fc.jsonValue(constraints) as fc.Arbitrary<JsonValue>;
}

/** Action ids of fixtures/vectors/catalogs/basic.yaml, in document order. */
export const BASIC_IDS = [
  "email.read",
  "email.send",
  "files.read",
  "refund.issue",
  "shell.exec",
  "audit.note",
] as const;

/**
 * A policy over the basic catalog whose grants carry binds, constraints and rules, so that
 * delegation has caveats to keep. Inline test data, not a fixture.
 */
export const CAVEAT_POLICY: JsonObject = {
  version: "caveat-policy-1",
  defaults: { maxRuntimeSeconds: 3600 },
  sources: {
    team: {
      allow: ["email.read", "email.send", "files.read", "audit.note", "refund.issue"],
      approval: ["refund.issue"],
      limits: {
        maxCalls: 100,
        maxCallsPerAction: 30,
        maxDelegationDepth: 3,
        maxRuntimeSeconds: 3000,
      },
      constraints: {
        "files.read": {
          schema: { properties: { path: { type: "string", pattern: "^/workspace/" } } },
        },
        "email.read": { schema: { properties: { limit: { maximum: 50 } } } },
        "email.send": { bind: { to: "ana@example.com" } },
      },
      rules: {
        "email.send": [
          {
            when: { properties: { subject: { pattern: "^urgent" } }, required: ["subject"] },
            then: "require_approval",
            requirement: "lead",
          },
        ],
        "files.read": [
          {
            when: { properties: { path: { pattern: "secret" } }, required: ["path"] },
            then: "deny",
            reason: "Secrets are off limits.",
          },
        ],
      },
    },
    reader: {
      kind: "narrow",
      allow: ["email.read", "files.read", "audit.note"],
      limits: { maxCalls: 40 },
    },
    careful: { approval: ["email.send"], limits: { maxDelegationDepth: 1 } },
    "org-deny": { global: true, deny: ["shell.exec"] },
  },
  profiles: {
    team: { sources: ["team"] },
    "team-reader": { sources: ["team", "reader"] },
    "team-careful": { sources: ["team", "careful"] },
    "team-shadow": { sources: ["team"], mode: "shadow" },
  },
};

export function caveatPolicyOf(catalog: Catalog): Policy {
  return buildPolicy(CAVEAT_POLICY, catalog, "caveat-policy.yaml");
}

const MODES: readonly GrantMode[] = ["live", "shadow"];

/** A compose request over `profiles`: random requested actions (sometimes one the catalog lacks), ttl and mode. */
export function composeRequestArb(
  profiles: readonly string[],
  ids: readonly string[] = BASIC_IDS,
): fc.Arbitrary<ComposeRequest> {
  return fc
    .record({
      profile: fc.constantFrom(...profiles),
      requested: fc.option(fc.subarray([...ids, "ghost.action"]), { nil: undefined }),
      ttl: fc.option(fc.oneof(fc.integer({ min: 1, max: 10_000 }), fc.constantFrom(0, -5, 1.5)), {
        nil: undefined,
      }),
      mode: fc.option(fc.constantFrom(...MODES), { nil: undefined }),
    })
    .map(({ profile, requested, ttl, mode }) => ({
      profile,
      subject: "agent:a1",
      owner: "user:ana",
      purpose: "property test",
      ...(requested === undefined ? {} : { requestedActions: requested }),
      ...(ttl === undefined ? {} : { ttlSeconds: ttl }),
      ...(mode === undefined ? {} : { mode }),
    }));
}

/** Like composeRequestArb, but only requests that compose (no unknown action, a valid ttl). */
export function validComposeRequestArb(profiles: readonly string[]): fc.Arbitrary<ComposeRequest> {
  return composeRequestArb(profiles).map((r) => {
    const { requestedActions, ttlSeconds, ...rest } = r;
    const requested = (requestedActions ?? []).filter((a) => a !== "ghost.action");
    const ttl =
      ttlSeconds !== undefined && Number.isSafeInteger(ttlSeconds) && ttlSeconds > 0
        ? ttlSeconds
        : undefined;
    return {
      ...rest,
      ...(requested.length > 0 ? { requestedActions: requested } : {}),
      ...(ttl === undefined ? {} : { ttlSeconds: ttl }),
    };
  });
}

// ---------------------------------------------------------------------------------------------
// Delegation specs. A plan is drawn before the parent exists; `specFromPlan` turns it into a spec
// against a concrete parent, mostly picking what the parent holds so that many delegations succeed.

type Pick = "omit" | "allowed" | "approval";
type LimitName = keyof GrantLimits;

interface CaveatPick<T> {
  readonly actionId: string;
  readonly value: T;
}

export interface SpecPlan {
  /** One pick per BASIC_IDS entry. */
  readonly picks: readonly Pick[];
  /** Keep only picks the parent holds and the catalog lets it hand on (otherwise ask blindly, to provoke refusals). */
  readonly fromParent: boolean;
  readonly ttlSeconds: number | undefined;
  readonly limits: Partial<Record<LimitName, number>>;
  readonly binds: readonly CaveatPick<{ name: string; value: JsonValue }>[];
  readonly constraints: readonly CaveatPick<JsonSchema>[];
  readonly rules: readonly CaveatPick<Rule>[];
  /** Keep caveats for actions the child does not hold (which must be refused). */
  readonly strayCaveats: boolean;
  readonly mode: GrantMode | undefined;
}

const BIND_POOL: readonly CaveatPick<{ name: string; value: JsonValue }>[] = [
  { actionId: "email.send", value: { name: "to", value: "ana@example.com" } },
  { actionId: "email.send", value: { name: "to", value: "bob@example.com" } },
  { actionId: "email.read", value: { name: "folder", value: "inbox" } },
  { actionId: "files.read", value: { name: "path", value: "/workspace/notes.txt" } },
  { actionId: "audit.note", value: { name: "topic", value: "billing" } },
];

const CONSTRAINT_POOL: readonly CaveatPick<JsonSchema>[] = [
  { actionId: "email.read", value: { properties: { limit: { maximum: 10 } } } },
  { actionId: "files.read", value: { properties: { path: { pattern: "^/workspace/docs/" } } } },
  { actionId: "email.send", value: { properties: { subject: { maxLength: 12 } } } },
  { actionId: "audit.note", value: { required: ["topic"] } },
];

const RULE_POOL: readonly CaveatPick<Rule>[] = [
  {
    actionId: "email.read",
    value: {
      when: { properties: { folder: { const: "sent" } }, required: ["folder"] },
      then: "deny",
      reason: "Not the sent folder.",
      source: "delegation",
    },
  },
  {
    actionId: "files.read",
    value: {
      when: { required: ["path"] },
      then: "require_approval",
      requirement: "lead",
      source: "delegation",
    },
  },
  {
    actionId: "email.send",
    value: { when: true, then: "require_approval", requirement: "owner", source: "delegation" },
  },
];

/** `arb` one time in `1 + rarity`, otherwise undefined: most specs inherit most things. */
function rarely<T>(arb: fc.Arbitrary<T>, rarity = 2): fc.Arbitrary<T | undefined> {
  return fc.oneof(
    { weight: rarity, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: arb },
  );
}

const limitArb = rarely(fc.integer({ min: -1, max: 120 }), 3);

export const specPlanArb: fc.Arbitrary<SpecPlan> = fc.record({
  picks: fc.array(
    fc.constantFrom<Pick>("omit", "omit", "allowed", "allowed", "approval", "approval"),
    { minLength: BASIC_IDS.length, maxLength: BASIC_IDS.length },
  ),
  fromParent: fc.integer({ min: 0, max: 4 }).map((n) => n > 0),
  ttlSeconds: rarely(
    fc.oneof(
      { weight: 4, arbitrary: fc.integer({ min: 1, max: 1000 }) },
      fc.integer({ min: 1, max: 4000 }),
      fc.constantFrom(0, -1, 2.5),
    ),
    1,
  ),
  limits: fc
    .record({
      maxCalls: limitArb,
      maxCallsPerAction: limitArb,
      maxDelegationDepth: rarely(fc.integer({ min: -1, max: 4 })),
    })
    .map(
      (l) =>
        Object.fromEntries(Object.entries(l).filter(([, v]) => v !== undefined)) as Partial<
          Record<LimitName, number>
        >,
    ),
  binds: fc.subarray([...BIND_POOL]),
  constraints: fc.subarray([...CONSTRAINT_POOL]),
  rules: fc.subarray([...RULE_POOL]),
  strayCaveats: fc.integer({ min: 0, max: 9 }).map((n) => n === 0),
  mode: rarely(fc.constantFrom(...MODES)),
});

/** The delegation spec a plan asks of `parent`. */
export function specFromPlan(plan: SpecPlan, parent: TaskGrant, catalog: Catalog): DelegationSpec {
  const allowed: string[] = [];
  const approval: string[] = [];
  const holds = new Set([...parent.allowed, ...parent.approvalRequired]);
  const givable = (id: string, from: { has(id: string): boolean }) =>
    !plan.fromParent || (from.has(id) && catalog.actions.get(id)?.delegable === true);
  BASIC_IDS.forEach((id, i) => {
    const pick = plan.picks[i];
    if (pick === "allowed" && givable(id, new Set(parent.allowed))) allowed.push(id);
    if (pick === "approval" && givable(id, holds)) approval.push(id);
  });
  const kept = new Set([...allowed, ...approval]);
  const keep = (actionId: string) => plan.strayCaveats || kept.has(actionId);

  const caveats: Record<string, { constraints: JsonSchema[]; binds: JsonObject; rules: Rule[] }> =
    {};
  const slot = (actionId: string) =>
    (caveats[actionId] ??= { constraints: [], binds: {}, rules: [] });
  for (const b of plan.binds)
    if (keep(b.actionId)) slot(b.actionId).binds[b.value.name] = b.value.value;
  for (const c of plan.constraints)
    if (keep(c.actionId)) slot(c.actionId).constraints.push(c.value);
  for (const r of plan.rules) if (keep(r.actionId)) slot(r.actionId).rules.push(r.value);

  return {
    subject: "agent:child",
    allowed,
    ...(approval.length > 0 ? { approvalRequired: approval } : {}),
    ...(plan.ttlSeconds === undefined ? {} : { ttlSeconds: plan.ttlSeconds }),
    ...(Object.keys(plan.limits).length > 0 ? { limits: plan.limits } : {}),
    ...(Object.keys(caveats).length > 0 ? { caveats } : {}),
    ...(plan.mode === undefined ? {} : { mode: plan.mode }),
  };
}

// ---------------------------------------------------------------------------------------------
// Calls over the basic catalog: plausible arguments drawn from small pools, so that binds,
// constraints and rules sometimes hold and sometimes do not.

function callOf(tool: string, actionId: string, byId: boolean, args: unknown): ToolCall {
  return { callId: "call-1", ...(byId ? { actionId } : { toolName: tool }), arguments: args };
}

/** Arguments with every key of `model`, but now and then one key dropped. */
function args<T extends Record<string, unknown>>(model: {
  [K in keyof T]: fc.Arbitrary<T[K]>;
}): fc.Arbitrary<Record<string, unknown>> {
  return fc.tuple(fc.record(model), rarely(fc.nat(), 4)).map(([full, drop]) => {
    const keys = Object.keys(full);
    if (drop === undefined || keys.length === 0) return full;
    const { [keys[drop % keys.length] as string]: _dropped, ...rest } = full;
    return rest;
  });
}

/** For each basic action, calls to it (by tool name or by action id) with plausible arguments. */
export const CALL_ARBS: Readonly<Record<(typeof BASIC_IDS)[number], fc.Arbitrary<ToolCall>>> = {
  "email.read": fc
    .tuple(
      fc.boolean(),
      args({
        folder: fc.constantFrom("inbox", "sent", "archive", "spam"),
        limit: fc.constantFrom(5, 30, 80, 200, -1),
      }),
    )
    .map(([byId, a]) => callOf("read_email", "email.read", byId, a)),
  "email.send": fc
    .tuple(
      fc.boolean(),
      args({
        to: fc.constantFrom(
          "ana@example.com",
          "ana@example.com",
          "bob@example.com",
          "not-an-email",
        ),
        subject: fc.constantFrom("hello", "urgent: pay now", "a subject longer than twelve"),
        body: fc.constantFrom("hi", ""),
      }),
    )
    .map(([byId, a]) => callOf("send_email", "email.send", byId, a)),
  "files.read": fc
    .tuple(
      fc.boolean(),
      args({
        path: fc.constantFrom(
          "/workspace/notes.txt",
          "/workspace/docs/a.md",
          "/workspace/secret.txt",
          "/etc/passwd",
          "",
        ),
      }),
    )
    .map(([byId, a]) => callOf("read_file", "files.read", byId, a)),
  "refund.issue": fc
    .tuple(
      fc.boolean(),
      args({
        order_id: fc.constantFrom("ord_1", "x"),
        amount: fc.constantFrom(10, 600, 20_000),
        currency: fc.constantFrom("EUR", "GBP"),
      }),
    )
    .map(([byId, a]) => callOf("issue_refund", "refund.issue", byId, a)),
  "shell.exec": fc
    .constantFrom("ls", "rm -rf /")
    .map((command) => callOf("run_shell", "shell.exec", false, { command })),
  // An action without a tool takes no arguments: mostly `{}`, now and then some (always denied).
  "audit.note": fc
    .oneof(
      { arbitrary: fc.constant({}), weight: 3 },
      { arbitrary: args({ topic: fc.constantFrom("billing", "other") }), weight: 1 },
    )
    .map((a) => callOf("", "audit.note", true, a)),
};

/** A call to any basic action. */
export const basicCallArb: fc.Arbitrary<ToolCall> = fc.oneof(...Object.values(CALL_ARBS));

/** One call per basic action, to aim calls at what a grant holds. */
export const callPerActionArb: fc.Arbitrary<Readonly<Record<string, ToolCall>>> =
  fc.record(CALL_ARBS);

/** An approved, unexpired approval record bound to this call on this grant. */
export function approvedRecord(grant: TaskGrant, catalog: Catalog, call: ToolCall): ApprovalRecord {
  const actionId = call.actionId ?? catalog.tools.get(call.toolName ?? "")?.id ?? "";
  return {
    id: `approval-${grant.id}`,
    callDigest: callDigest(grant.id, actionId, call.arguments),
    status: "approved",
    expiresAt: Number.MAX_SAFE_INTEGER,
  };
}

// ---------------------------------------------------------------------------------------------
// Hostile input: names and arguments a gateway may forward from a model.

const TRICKY_KEYS = [
  "__proto__",
  "constructor",
  "prototype",
  "toString",
  "hasOwnProperty",
  "toJSON",
  "valueOf",
  "",
  "\u0000",
  "\ud83d\ude00",
];

/** Tool names and action ids: real ones, prototype keys, and arbitrary unicode (incl. lone surrogates). */
export const hostileNameArb: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    "read_email",
    "send_email",
    "run_shell",
    "email.read",
    "audit.note",
    "shell.exec",
    ...TRICKY_KEYS,
  ),
  fc.string({ unit: "grapheme", maxLength: 20 }),
  fc.string({ unit: "binary", maxLength: 20 }),
  fc.string({ unit: fc.constantFrom("a", "\ud800", "\udc00", "\u2028", "."), maxLength: 6 }),
);

const hostileKeyArb = fc.oneof(
  fc.constantFrom(
    "folder",
    "limit",
    "to",
    "subject",
    "body",
    "path",
    "order_id",
    "amount",
    "currency",
    "command",
    "topic",
    ...TRICKY_KEYS,
  ),
  fc.string({ unit: "grapheme", maxLength: 8 }),
);

/** Arguments a model may send: any JSON, objects with tricky keys, and non-JSON values (bigint, NaN, Map, …). */
export const hostileArgumentsArb: fc.Arbitrary<unknown> = fc.oneof(
  jsonArb({ maxDepth: 4 }),
  fc.dictionary(hostileKeyArb, jsonArb({ maxDepth: 3 }), { maxKeys: 6 }),
  fc.object({ key: hostileKeyArb, maxDepth: 3, maxKeys: 6 }),
  fc.anything({
    key: hostileKeyArb,
    maxDepth: 3,
    maxKeys: 5,
    withBigInt: true,
    withBoxedValues: true,
    withDate: true,
    withMap: true,
    withSet: true,
    withNullPrototype: true,
    withSparseArray: true,
    withTypedArray: true,
    withObjectString: true,
  }),
  jsonArb({ maxDepth: 4 }).map(
    (v) => JSON.parse(`{"__proto__": ${JSON.stringify(v)}, "folder": "inbox"}`) as unknown,
  ),
);

/** Any approval record, matching or not. */
export const approvalRecordArb: fc.Arbitrary<ApprovalRecord> = fc.record({
  id: fc.string({ maxLength: 8 }),
  callDigest: fc.oneof(fc.constant(""), fc.stringMatching(/^[0-9a-f]{64}$/)),
  status: fc.constantFrom("pending", "approved", "rejected", "consumed"),
  expiresAt: fc.integer({ min: 0, max: 2_000_000_000 }),
});

// ---------------------------------------------------------------------------------------------
// A synthetic catalog whose every name, description and schema property is a distinctive token,
// so that "nothing of a hidden action appears in the view" can be checked by searching text.

export const SYNTH_SIZE = 9;

export interface SynthTokens {
  readonly id: string;
  readonly name: string;
  readonly description: string;
  readonly property: string;
  readonly output: string;
  readonly bound: string;
  readonly hasTool: boolean;
}

export function synthTokens(i: number): SynthTokens {
  return {
    id: `act.n${i}.x`,
    name: `tool_n${i}_x`,
    description: `Description number ${i}.`,
    property: `prop_n${i}_p`,
    output: `out_n${i}_o`,
    bound: `bound_n${i}_b`,
    hasTool: i % 4 !== 3,
  };
}

export function synthCatalog(): Catalog {
  const actions = Array.from({ length: SYNTH_SIZE }, (_, i) => {
    const t = synthTokens(i);
    if (!t.hasTool) return { id: t.id, effect: "write" };
    return {
      id: t.id,
      effect: "read",
      tool: {
        name: t.name,
        description: t.description,
        inputSchema: {
          type: "object",
          properties: { [t.property]: { type: "string", description: `The ${t.property}.` } },
        },
        ...(i % 2 === 0
          ? { outputSchema: { type: "object", properties: { [t.output]: { type: "string" } } } }
          : {}),
      },
    };
  });
  return buildCatalog({ version: "synth-1", actions }, "synth.yaml");
}
