/**
 * Cedar's and casbin's contenders for `npm run bench:decide`, loaded from bench/compare (their
 * own install, kept out of Charter's dependencies; the types below are the little this bench uses).
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { nsPerCall } from "./rounds.js";
import { CALLS_BY_KIND, checkEquivalent, type Contender, type Kind } from "./decide-scenario.js";

const COMPARE = join(fileURLToPath(new URL("../..", import.meta.url)), "bench", "compare");

interface CedarAnswer {
  readonly type: "success" | "failure";
  readonly response?: { readonly decision: "allow" | "deny" };
  readonly errors?: unknown;
}
interface CedarWasm {
  preparseSchema(name: string, schema: string): CedarAnswer;
  preparsePolicySet(id: string, policies: { staticPolicies: string }): CedarAnswer;
  statefulIsAuthorized(call: Record<string, unknown>): CedarAnswer;
}
interface CasbinEnforcer {
  enforceSync(...request: unknown[]): boolean;
}
interface Casbin {
  newModelFromString(text: string): unknown;
  newEnforcer(model: unknown, adapter: unknown): Promise<CasbinEnforcer>;
  StringAdapter: new (text: string) => unknown;
}

function requireCompare(): NodeJS.Require {
  if (!existsSync(join(COMPARE, "node_modules")))
    throw new Error(
      "bench/compare is not installed: `npm run bench:decide` installs it (npm ci --prefix bench/compare)",
    );
  return createRequire(join(COMPARE, "package.json"));
}

const CEDAR_SCHEMA = `
entity Agent;
entity Tool;
action "email.read" appliesTo { principal: Agent, resource: Tool, context: { limit?: Long } };
action "refund.issue" appliesTo { principal: Agent, resource: Tool, context: { order_id: String, amount: Long, currency: String, reason: String } };
action "shell.exec" appliesTo { principal: Agent, resource: Tool, context: { command: String } };
`;
const CEDAR_POLICIES = `
permit (principal == Agent::"bench", action == Action::"email.read", resource);
permit (principal == Agent::"bench", action == Action::"refund.issue", resource)
  when { context.amount <= 100 && ["EUR", "USD"].contains(context.currency) };
forbid (principal, action == Action::"shell.exec", resource);
`;

/** Cedar, stateful: the schema and the policy set preparsed once; each request validated against the schema, as decide validates arguments. */
export async function cedarContenders(): Promise<Record<string, Contender>> {
  const req = requireCompare();
  const cedar = (await import(
    pathToFileURL(req.resolve("@cedar-policy/cedar-wasm/nodejs")).href
  )) as CedarWasm;
  for (const answer of [
    cedar.preparseSchema("bench", CEDAR_SCHEMA),
    cedar.preparsePolicySet("bench", { staticPolicies: CEDAR_POLICIES }),
  ]) {
    if (answer.type !== "success") throw new Error(`cedar: ${JSON.stringify(answer.errors)}`);
  }
  const request = (kind: Kind) => ({
    principal: { type: "Agent", id: "bench" },
    action: { type: "Action", id: CALLS_BY_KIND[kind].actionId },
    resource: { type: "Tool", id: CALLS_BY_KIND[kind].toolName },
    context: CALLS_BY_KIND[kind].arguments,
    entities: [],
    preparsedPolicySetId: "bench",
    preparsedSchemaName: "bench",
    validateRequest: true,
  });
  const requests = {
    allow: request("allow"),
    constraint: request("constraint"),
    forbidden: request("forbidden"),
  };
  const allows = (kind: Kind) =>
    cedar.statefulIsAuthorized(requests[kind]).response?.decision === "allow";
  checkEquivalent("cedar", allows);
  return {
    "cedar statefulIsAuthorized allow": (n) => nsPerCall(n, () => allows("allow")),
    "cedar statefulIsAuthorized deny": (n) => nsPerCall(n, () => allows("constraint")),
  };
}

/** casbin: an ABAC matcher evaluating each policy line's rule, deny-override; it checks no argument types. */
export async function casbinContenders(): Promise<Record<string, Contender>> {
  const casbin = requireCompare()("casbin") as Casbin;
  const model = casbin.newModelFromString(`
[request_definition]
r = sub, act, args
[policy_definition]
p = sub, act, rule, eft
[policy_effect]
e = some(where (p.eft == allow)) && !some(where (p.eft == deny))
[matchers]
m = r.sub == p.sub && r.act == p.act && eval(p.rule)
`);
  const enforcer = await casbin.newEnforcer(
    model,
    new casbin.StringAdapter(`
p, agent:bench, email.read, true, allow
p, agent:bench, refund.issue, r.args.amount <= 100 && (r.args.currency == 'EUR' || r.args.currency == 'USD'), allow
p, agent:bench, shell.exec, true, deny
`),
  );
  const allows = (kind: Kind) =>
    enforcer.enforceSync(
      "agent:bench",
      CALLS_BY_KIND[kind].actionId,
      CALLS_BY_KIND[kind].arguments,
    );
  checkEquivalent("casbin", allows);
  return {
    "casbin enforceSync allow": (n) => nsPerCall(n, () => allows("allow")),
    "casbin enforceSync deny": (n) => nsPerCall(n, () => allows("constraint")),
  };
}
