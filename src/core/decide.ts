import type { Catalog, CatalogAction } from "./catalog.js";
import { callDigests, type CallDigests, type Hash } from "./digest.js";
import type { TaskGrant } from "./grant.js";
import { grantIndex } from "./grant-index.js";
import { jsonDepthExceeds } from "./json-depth.js";
import { isJsonObject, jsonEqual, type JsonSchema } from "./json.js";
import type { Rule } from "./policy.js";
import { resolveResource } from "./resource.js";
import { emptyRun, runConditionHolds, type RunView } from "./run.js";
import { runDenyMessage, runHoldMessage } from "./run-text.js";
import { formatProblems, type SchemaProblem } from "./schema.js";
import { checkTarget } from "./target.js";
import type { ApprovalRecord, Reason, ReasonCode, ToolCall, Verdict } from "./verdict.js";

/** What `decide` needs besides the grant, the catalog and the call. */
export interface DecideContext {
  /** Unix seconds. */
  readonly now: number;
  /** The approval record the caller presented for this call, if any. */
  readonly approval?: ApprovalRecord;
  /** Deepest nesting of arguments decided on (default 32, as `DEFAULT_ARGUMENT_LIMITS`); deeper is INVALID_ARGUMENTS. */
  readonly maxArgumentDepth?: number;
  /** The sha256 call digests are computed with (default: the core's pure-JS `sha256Hex`; the server passes node's). */
  readonly hash?: Hash;
  /**
   * The digests of exactly this call's arguments, when the caller made them already (the shell
   * makes them once per call, for the decision, the approval and the receipt alike); else made here.
   */
  readonly digests?: CallDigests;
  /** For a start-agent call: the grant the shell verified from the call's delegated grant token. */
  readonly delegatedGrant?: TaskGrant;
  /**
   * Re-checking a held call for its approval (`recheckCall`): the approval stores the action and
   * arguments, not the target, so the target is not checked here; it is checked again, with the
   * delegated grant, when the approved call is made.
   */
  readonly recheck?: boolean;
  /**
   * The run the call belongs to, as the shell read it (DESIGN §7): rules over the run are judged
   * on it. Absent (or with runId ""), a rule over the run's labels or earlier calls never holds.
   */
  readonly run?: RunView;
}

/**
 * A verdict before its call digest is attached. The digest (a canonical serialization and a
 * sha256) costs more than every check together, and only approvals, receipts and the decision
 * record need it, so `assess` leaves it to whoever needs it: `callDigest()` computes it on first
 * use (with the context's hash) and remembers it. It is "" where `decide` answers "" (arguments
 * nested too deep or without a JSON text).
 */
export interface Assessment {
  readonly verdict: Omit<Verdict, "callDigest">;
  readonly callDigest: () => string;
  /**
   * The digest of the arguments alone (`argumentsDigest`), sharing the call digest's canonical
   * serialization of them: what a receipt binds besides the call digest. "" where the call digest is "".
   */
  readonly argumentsDigest: () => string;
  /**
   * The rule (over the arguments or over the run) that denied the call or held it for approval,
   * when one did: what coverage, shadow flips and replay name as responsible (`ruleRef`). Absent
   * when no rule decided (a list, a constraint, the grant, an approval record).
   */
  readonly rule?: Rule;
}

/** The verdict with its call digest: what `decide` answers. */
export function withCallDigest(assessment: Assessment): Verdict {
  return { ...assessment.verdict, callDigest: assessment.callDigest() };
}

/** Nesting bound `decide` applies when the context names none. */
export const DEFAULT_MAX_ARGUMENT_DEPTH = 32;

/** The requirement named for actions listed as approval-required without a rule naming one. */
export const DEFAULT_REQUIREMENT = "owner";

/**
 * Decides one tool call (DESIGN §2): the first failing check decides, in the documented order.
 * Pure and total: it never throws, whatever the arguments and names are. Arguments nested deeper
 * than `maxArgumentDepth`, or that no check can evaluate, are denied INVALID_ARGUMENTS.
 */
export function decide(
  grant: TaskGrant,
  catalog: Catalog,
  call: ToolCall,
  ctx: DecideContext,
): Verdict {
  return withCallDigest(assess(grant, catalog, call, ctx));
}

/** `decide` without the call digest computed (until `callDigest()` is called): the same verdict, checks only. */
export function assess(
  grant: TaskGrant,
  catalog: Catalog,
  call: ToolCall,
  ctx: DecideContext,
): Assessment {
  const maxDepth = ctx.maxArgumentDepth ?? DEFAULT_MAX_ARGUMENT_DEPTH;
  const refused = (message: string): Assessment => ({
    verdict: {
      decision: "deny",
      reason: { code: "INVALID_ARGUMENTS", message },
      callId: typeof call.callId === "string" ? call.callId : "",
      actionId: "",
      toolName: typeof call.toolName === "string" ? call.toolName : "",
    },
    callDigest: NO_DIGEST,
    argumentsDigest: NO_DIGEST,
  });
  if (jsonDepthExceeds(call.arguments, maxDepth)) {
    return refused(
      `The arguments nest deeper than ${maxDepth} levels. Send a flatter JSON object and call again.`,
    );
  }
  try {
    return decideChecked(grant, catalog, call, ctx);
  } catch {
    // Fail closed: whatever could not be evaluated is not allowed.
    return refused(
      "The call cannot be evaluated; it is refused. Check the arguments and call again.",
    );
  }
}

const NO_DIGEST = (): string => "";
const NO_RUN: RunView = emptyRun("");

type Body = Omit<Verdict, "callDigest">;

function decideChecked(
  grant: TaskGrant,
  catalog: Catalog,
  call: ToolCall,
  ctx: DecideContext,
): Assessment {
  const resolved = resolve(catalog, call);
  const action = typeof resolved === "string" ? undefined : resolved;
  const actionId = action?.id ?? call.actionId ?? call.toolName ?? "";
  const toolName = action ? (action.tool?.name ?? "") : (call.toolName ?? "");
  // Built only when a message needs it, except for a call naming nothing the catalog knows, whose
  // names may be any value: there it is built first, so a name with no JSON text is "cannot be evaluated".
  let label: string | undefined;
  const shown = (): string => (label ??= JSON.stringify(toolName || actionId).slice(0, 80));
  if (!action) shown();
  let digests: CallDigests | undefined;
  const digest = (): CallDigests =>
    (digests ??= ctx.digests ?? callDigests(call.arguments, ctx.hash));
  const callDigest = (): string => orEmpty(() => digest().call(grant.id, actionId));
  const argumentsDigest = (): string => orEmpty(() => digest().arguments());
  const assessed = (verdict: Body, rule?: Rule): Assessment =>
    rule === undefined
      ? { verdict, callDigest, argumentsDigest }
      : { verdict, callDigest, argumentsDigest, rule };
  const run = ctx.run;
  const view = run ?? NO_RUN;
  const base = {
    callId: call.callId,
    actionId: action?.id ?? "",
    toolName,
    ...(run !== undefined && run.runId !== ""
      ? { runId: run.runId, runLabels: run.labels.map((l) => l.label) }
      : {}),
  };
  const deny = (
    code: ReasonCode,
    message: string,
    extra: Partial<Body> = {},
    rule?: Rule,
  ): Assessment =>
    assessed({ decision: "deny", reason: { code, message }, ...base, ...extra }, rule);

  // 1. The grant's validity window.
  if (!(ctx.now >= grant.issuedAt && ctx.now < grant.expiresAt)) {
    return deny(
      "GRANT_EXPIRED",
      "This task's grant is not valid at this time (expired or not yet valid). Stop making tool calls and report back.",
    );
  }
  // 2. The catalog knows the tool.
  if (!action) {
    return deny(
      "UNKNOWN_ACTION",
      typeof resolved === "string"
        ? resolved
        : `No tool named ${shown()} exists. Use only the tools you were given.`,
    );
  }
  // 3. The grant names it (looked up in the grant's index, built once per grant: no list is scanned per call).
  const index = grantIndex(grant);
  if (index.denied.has(action.id)) {
    return deny(
      "EXPLICIT_DENY",
      `The tool ${shown()} is forbidden in this task. Do not call it again.`,
    );
  }
  const listedForApproval = index.approvalRequired.has(action.id);
  if (!listedForApproval && !index.allowed.has(action.id)) {
    return deny(
      "NOT_GRANTED",
      `The tool ${shown()} is not available in this task. Do not call it again; use the tools you were given.`,
    );
  }
  // 3b. The call's target matches the action's kind; an agent starts only under a delegated grant.
  const target = ctx.recheck === true ? undefined : checkTarget(grant, action, call.target, ctx);
  if (target) return deny(target.code, target.message);
  // 4. Arguments are an object valid against the tool's input schema.
  const args = call.arguments;
  if (!isJsonObject(args))
    return deny("INVALID_ARGUMENTS", `The arguments for ${shown()} must be a JSON object.`);
  // An action without a tool has no input schema: it takes no arguments at all.
  if (!action.input && Object.keys(args).length > 0)
    return deny(
      "INVALID_ARGUMENTS",
      `The action ${shown()} takes no arguments; send an empty object.`,
    );
  const inputProblems = action.input?.check(args) ?? [];
  if (inputProblems.length > 0) {
    return deny(
      "INVALID_ARGUMENTS",
      `The arguments for ${shown()} are invalid: ${formatProblems(inputProblems)}. Fix them and call again.`,
    );
  }
  // 5. Binds and constraints hold; the resource resolves.
  const caveats = index.caveats(action.id);
  for (const [name, value] of caveats.binds) {
    if (!Object.hasOwn(args, name) || !jsonEqual(args[name], value)) {
      return deny(
        "CONSTRAINT_VIOLATION",
        `The argument "${name}" of ${shown()} is fixed for this task; use the value shown in the tool's schema.`,
      );
    }
  }
  for (const constraint of caveats.constraints) {
    const problems = checkCaveat(catalog, constraint, args);
    if (problems === undefined)
      return deny(
        "CONSTRAINT_VIOLATION",
        `This task's constraints for ${shown()} cannot be evaluated; the call is refused.`,
      );
    if (problems.length > 0) {
      return deny(
        "CONSTRAINT_VIOLATION",
        `The arguments for ${shown()} are outside what this task permits: ${formatProblems(problems)}.`,
      );
    }
  }
  let resource: string | undefined;
  if (action.resource) {
    const r = resolveResource(action.resource, args);
    if ("missing" in r) {
      return deny(
        "INVALID_ARGUMENTS",
        `The argument "${r.missing}" of ${shown()} must be a string, number or boolean.`,
      );
    }
    resource = r.resource;
  }
  const withResource = resource === undefined ? {} : { resource };

  // 6. Deny rules.
  const rules = caveats.rules;
  // A rule that cannot be evaluated counts as matching: a deny rule denies, an approval rule asks.
  const holds = (r: Rule) => ruleHolds(catalog, r, grant, args, ctx.now, view);
  const denyRule = rules.find((r) => r.then === "deny" && holds(r));
  if (denyRule?.then === "deny") {
    if (denyRule.run === undefined)
      return deny("RULE_DENY", denyRule.reason, withResource, denyRule);
    return deny(
      "RUN_RULE",
      runDenyMessage(denyRule, view),
      { ...withResource, ...(denyRule.id === undefined ? {} : { rule: denyRule.id }) },
      denyRule,
    );
  }

  // 7. Approval, when listed or when a require_approval rule matches.
  const approvalRule = rules.find((r) => r.then === "require_approval" && holds(r));
  const requirement =
    approvalRule?.then === "require_approval"
      ? approvalRule.requirement
      : listedForApproval
        ? DEFAULT_REQUIREMENT
        : undefined;
  let verdict: Body;
  if (requirement === undefined) {
    verdict = { decision: "allow", ...base, ...withResource };
  } else {
    const byRun = approvalRule?.run === undefined ? undefined : approvalRule;
    const held = byRun && {
      ...(byRun.id === undefined ? {} : { rule: byRun.id }),
      reason: {
        code: "RUN_RULE" as const,
        message: runHoldMessage(byRun, view, shown(), requirement, DEFAULT_REQUIREMENT),
      },
    };
    verdict = approvalVerdict(
      ctx,
      { ...base, ...(held?.rule ? { rule: held.rule } : {}) },
      { ...withResource, requirement },
      callDigest,
      shown,
    );
    if (verdict.decision === "deny") return assessed(verdict, approvalRule);
    if (verdict.decision === "require_approval" && held)
      verdict = { ...verdict, reason: held.reason };
  }
  // 9. Shadow grants suppress effects; a deny stays a deny.
  if (grant.mode === "shadow") {
    const would = verdict.decision === "allow" ? "allowed" : "held for approval";
    return assessed(
      {
        ...verdict,
        decision: "effect_suppressed",
        reason: {
          code: "SHADOW_MODE",
          message: `Dry run: the call would have been ${would}; its effect is suppressed.`,
        },
      },
      approvalRule,
    );
  }
  return assessed(verdict, approvalRule);
}

/**
 * Whether a rule holds for a call: its `when` over the arguments (a `when` that cannot be
 * evaluated counts as holding: a deny rule denies, an approval rule asks) and, for a rule over
 * the run, its condition on the run. What `decide` asks of each rule, for coverage to ask the same.
 */
export function ruleHolds(
  catalog: Catalog,
  rule: Rule,
  grant: TaskGrant,
  args: unknown,
  now: number,
  run: RunView = NO_RUN,
): boolean {
  return (
    matches(catalog, rule, args) &&
    (rule.run === undefined || runConditionHolds(rule, grant, args, now, run))
  );
}

type Base = Pick<Verdict, "callId" | "actionId" | "toolName" | "runId" | "runLabels" | "rule">;

function approvalVerdict(
  ctx: DecideContext,
  base: Base,
  extra: Pick<Verdict, "resource" | "requirement">,
  callDigest: () => string,
  shown: () => string,
): Body {
  const record = ctx.approval;
  const out = (decision: Verdict["decision"], reason?: Reason): Body => ({
    decision,
    ...(reason ? { reason } : {}),
    ...base,
    ...extra,
    ...(record ? { approvalId: record.id } : {}),
  });
  if (!record) return out("require_approval");
  if (record.callDigest !== callDigest()) {
    return out("deny", {
      code: "APPROVAL_MISMATCH",
      message: `The approval presented was given for a different call to ${shown()}; request approval for this exact call.`,
    });
  }
  if (record.status === "rejected")
    return out("deny", {
      code: "APPROVAL_REJECTED",
      message: `The owner rejected this call to ${shown()}. Do not retry it.`,
    });
  if (record.status === "expired" || ctx.now >= record.expiresAt) {
    return out("deny", {
      code: "APPROVAL_EXPIRED",
      message: `The approval for this call to ${shown()} has expired; request a new one.`,
    });
  }
  if (record.status === "consumed")
    return out("deny", {
      code: "APPROVAL_CONSUMED",
      message: `The approval for this call to ${shown()} was already used; request a new one.`,
    });
  // Only an approved record allows; pending, superseded, or any status this version does not know, asks again.
  return record.status === "approved" ? out("allow") : out("require_approval");
}

/** Finds the action a call names; answers a model-facing message when the names disagree or nothing matches. */
function resolve(catalog: Catalog, call: ToolCall): CatalogAction | string | undefined {
  const byTool =
    typeof call.toolName === "string" && call.toolName !== ""
      ? catalog.tools.get(call.toolName)
      : undefined;
  const byId =
    typeof call.actionId === "string" && call.actionId !== ""
      ? catalog.actions.get(call.actionId)
      : undefined;
  if (call.toolName && call.actionId) {
    if (byTool && byId && byTool === byId) return byTool;
    if (byTool && byId)
      return "The call names a tool and an action that differ. Use only the tools you were given.";
    return undefined;
  }
  return byTool ?? byId;
}

function matches(catalog: Catalog, rule: Rule, args: unknown): boolean {
  return schemaHolds(catalog, rule.when, args) !== false;
}

/**
 * Whether a value satisfies a schema compiled by the catalog's compiler; undefined when the schema
 * does not compile or cannot be evaluated (each caller fails closed its own way).
 */
export function schemaHolds(
  catalog: Catalog,
  schema: JsonSchema,
  value: unknown,
): boolean | undefined {
  const problems = checkCaveat(catalog, schema, value);
  return problems === undefined ? undefined : problems.length === 0;
}

/** Checks arguments against a caveat's schema; undefined when the schema does not compile (fail closed). */
function checkCaveat(
  catalog: Catalog,
  schema: JsonSchema,
  args: unknown,
): SchemaProblem[] | undefined {
  try {
    return catalog.schemas.compile(schema).check(args);
  } catch {
    return undefined;
  }
}

/** A digest, or "" when the arguments have no JSON representation (such a call is denied anyway). */
function orEmpty(digest: () => string): string {
  try {
    return digest();
  } catch {
    return "";
  }
}
