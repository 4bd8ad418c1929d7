/** Charter's contenders for `npm run bench:decide`: the scenario's policy as a catalog, a policy and a composed grant. */
import { nativeSha256Hex } from "../src/authority/sha256.js";
import {
  assess,
  buildCatalog,
  buildPolicy,
  callDigests,
  compose,
  decide,
  type TaskGrant,
} from "../src/core/index.js";
import { nsPerCall } from "./rounds.js";
import { CALLS_BY_KIND, checkEquivalent, type Contender, type Kind } from "./decide-scenario.js";

const NOW = 1_800_000_000;

/** The refund bound is a constraint of the grant; the deny is a global source's. */
export function charterContenders(): Record<string, Contender> {
  const catalog = buildCatalog(
    {
      version: "bench-1",
      actions: [
        {
          id: "email.read",
          tool: {
            name: "read_mail",
            description: "Reads mail.",
            inputSchema: {
              type: "object",
              additionalProperties: false,
              properties: { limit: { type: "integer", minimum: 1 } },
            },
          },
        },
        {
          id: "refund.issue",
          effect: "external",
          tool: {
            name: "issue_refund",
            description: "Issues a refund.",
            inputSchema: {
              type: "object",
              additionalProperties: false,
              required: ["order_id", "amount", "currency", "reason"],
              properties: {
                order_id: { type: "string", pattern: "^ord_[A-Z0-9]+$" },
                amount: { type: "integer", minimum: 0 },
                currency: { type: "string", enum: ["EUR", "USD", "GBP"] },
                reason: { type: "string", maxLength: 200 },
              },
            },
          },
        },
        {
          id: "shell.exec",
          effect: "destructive",
          tool: {
            name: "run_shell",
            description: "Runs a command.",
            inputSchema: {
              type: "object",
              required: ["command"],
              properties: { command: { type: "string" } },
            },
          },
        },
      ],
    },
    "bench-catalog",
  );
  const policy = buildPolicy(
    {
      version: "bench-policy-1",
      sources: {
        bench: {
          allow: ["email.read", "refund.issue"],
          constraints: {
            "refund.issue": {
              schema: {
                properties: { amount: { maximum: 100 }, currency: { enum: ["EUR", "USD"] } },
              },
            },
          },
        },
        guardrails: { global: true, deny: ["shell.exec"] },
      },
      profiles: { bench: { sources: ["bench"] } },
    },
    catalog,
    "bench-policy",
  );
  const composed = compose(
    { profile: "bench", subject: "agent:bench", owner: "user:bench", purpose: "bench" },
    policy,
    catalog,
    NOW,
    "grt_bench",
  );
  if (composed.kind !== "granted") throw new Error("the bench policy must compose");
  // Deep-frozen, as the verifier hands grants out (and so indexed once, as on the server).
  const grant: TaskGrant = deepFreeze(structuredClone(composed.grant));
  const ctx = { now: NOW + 1, hash: nativeSha256Hex };
  // Calls by tool name, as a gateway sends them.
  const call = (kind: Kind) => {
    const { callId, toolName, arguments: args } = CALLS_BY_KIND[kind];
    return { callId, toolName, arguments: args };
  };
  const calls = {
    allow: call("allow"),
    constraint: call("constraint"),
    forbidden: call("forbidden"),
  };
  checkEquivalent(
    "assess()",
    (kind) => assess(grant, catalog, calls[kind], ctx).verdict.decision === "allow",
  );
  checkEquivalent(
    "decide()",
    (kind) => decide(grant, catalog, calls[kind], ctx).decision === "allow",
  );
  const input = catalog.tools.get("issue_refund")?.input;
  if (!input) throw new Error("issue_refund has a schema");
  return {
    "ajv check of the arguments (floor)": (n) =>
      nsPerCall(n, () => input.check(calls.allow.arguments)),
    "assess() allow": (n) => nsPerCall(n, () => assess(grant, catalog, calls.allow, ctx)),
    "assess() deny (constraint)": (n) =>
      nsPerCall(n, () => assess(grant, catalog, calls.constraint, ctx)),
    "assess() deny (explicit)": (n) =>
      nsPerCall(n, () => assess(grant, catalog, calls.forbidden, ctx)),
    "decide() allow, digest included": (n) =>
      nsPerCall(n, () => decide(grant, catalog, calls.allow, ctx)),
    "call digest alone (native sha256)": (n) =>
      nsPerCall(n, () =>
        callDigests(calls.allow.arguments, nativeSha256Hex).call(grant.id, "refund.issue"),
      ),
  };
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
