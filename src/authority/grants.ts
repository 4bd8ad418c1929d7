import { compose, type ComposeRequest } from "../core/compose.js";
import { delegate, type DelegationSpec } from "../core/delegate.js";
import { grantWithdrawal } from "../core/withdraw.js";
import type { TaskGrant } from "../core/grant.js";
import type { GrantOrigin } from "../core/replay.js";
import type { StoredGrant } from "../store/port.js";
import { signGrantToken } from "../token/index.js";
import { checkCaveatSchemas } from "./caveat-schemas.js";
import type { AuthorityContext } from "./context.js";
import { AuthorityError, invalidRequest } from "./errors.js";
import { DEFAULT_AUTHORITY_LIMITS } from "./limits.js";
import { loadGrantInForce } from "./load-grant.js";

/** The longest lifetime a caller may ask for; the policy's runtime limits usually cut it shorter. */
export const MAX_TTL_SECONDS = 366 * 24 * 3600;

/** A grant as recorded, and its signed token. */
export interface IssuedGrant {
  readonly grant: TaskGrant;
  readonly token: string;
}

/** IssueGrant: compose from the policy in force, record the grant, then sign its token. */
export async function issueGrant(
  ctx: AuthorityContext,
  req: ComposeRequest,
  caller?: string,
): Promise<IssuedGrant> {
  for (const field of ["profile", "subject", "owner"] as const) {
    if (req[field].trim() === "") throw invalidRequest(field, "is required");
  }
  (req.requestedActions ?? []).forEach((a, i) => {
    if (a === "") throw invalidRequest(`requested_actions[${i}]`, "must not be empty");
  });
  if (
    req.ttlSeconds !== undefined &&
    !(
      Number.isSafeInteger(req.ttlSeconds) &&
      req.ttlSeconds > 0 &&
      req.ttlSeconds <= MAX_TTL_SECONDS
    )
  ) {
    throw invalidRequest("ttl_seconds", `must be between 1 and ${MAX_TTL_SECONDS}`);
  }
  const { catalog, policy } = ctx.policySet();
  const result = compose(req, policy, catalog, ctx.now(), ctx.newId("grt"));
  switch (result.kind) {
    case "unknown_action":
      if (result.source === "request")
        throw invalidRequest(
          "requested_actions",
          `unknown action "${result.actionId}"`,
          "UNKNOWN_ACTION",
        );
      throw new AuthorityError(
        "FAILED_PRECONDITION",
        `UNKNOWN_ACTION: source "${result.source}" names "${result.actionId}", which the catalog lacks`,
        {
          reason: "UNKNOWN_ACTION",
        },
      );
    case "denied":
      if (result.code === "UNKNOWN_PROFILE")
        throw invalidRequest("profile", result.message, result.code);
      if (result.code === "INVALID_REQUEST")
        throw invalidRequest("ttl_seconds", result.message, result.code);
      throw new AuthorityError("FAILED_PRECONDITION", `${result.code}: ${result.message}`, {
        reason: result.code,
      });
    case "granted":
      return record(ctx, result.grant, caller, { kind: "composed", request: composeOrigin(req) });
  }
}

/** The compose request as recorded with its grant: only the fields IssueGrant was given. */
function composeOrigin(req: ComposeRequest): ComposeRequest {
  return {
    profile: req.profile,
    subject: req.subject,
    owner: req.owner,
    purpose: req.purpose,
    ...(req.requestedActions === undefined || req.requestedActions.length === 0
      ? {}
      : { requestedActions: [...req.requestedActions] }),
    ...(req.ttlSeconds === undefined ? {} : { ttlSeconds: req.ttlSeconds }),
    ...(req.mode === undefined ? {} : { mode: req.mode }),
  };
}

/**
 * DelegateGrant: a child grant that only narrows the parent the token carries (the core's
 * `delegate`). A parent token that does not check out is UNAUTHENTICATED; a caveat schema that
 * does not compile is INVALID_REQUEST; a widening is FAILED_PRECONDITION with the refusal code as
 * its reason.
 */
export async function delegateGrant(
  ctx: AuthorityContext,
  req: {
    readonly parentToken: string;
    readonly spec: DelegationSpec;
    readonly allowedTools?: readonly string[];
    readonly approvalRequiredTools?: readonly string[];
  },
  caller?: string,
): Promise<IssuedGrant> {
  if (req.parentToken === "") throw invalidRequest("parent_token", "is required");
  if (req.spec.subject.trim() === "") throw invalidRequest("subject", "is required");
  const now = ctx.now();
  const { catalog, policy } = ctx.policySet();
  const check = await loadGrantInForce(ctx, req.parentToken, now, policy);
  if (!check.ok)
    throw new AuthorityError("UNAUTHENTICATED", `${check.code}: ${check.message}`, {
      reason: check.code,
    });
  const withdrawn = grantWithdrawal(check.grant, policy);
  if (withdrawn !== undefined)
    throw new AuthorityError("UNAUTHENTICATED", `POLICY_WITHDRAWN: ${withdrawn}`, {
      reason: "POLICY_WITHDRAWN",
    });
  const parent = check.grant;
  checkCaveatSchemas(req.spec, catalog);
  // A tool name stands for its action; whether the parent holds it and may hand it on is the core's check.
  const byTool = (names: readonly string[] | undefined) =>
    (names ?? []).map((name) => {
      const action = catalog.tools.get(name);
      if (action === undefined) {
        throw new AuthorityError(
          "FAILED_PRECONDITION",
          `ACTION_NOT_IN_PARENT: the parent grant holds no tool named "${name.slice(0, 80)}"`,
          {
            reason: "ACTION_NOT_IN_PARENT",
          },
        );
      }
      return action.id;
    });
  const spec: DelegationSpec = {
    ...req.spec,
    allowed: [...req.spec.allowed, ...byTool(req.allowedTools)],
    approvalRequired: [...(req.spec.approvalRequired ?? []), ...byTool(req.approvalRequiredTools)],
  };
  const result = delegate(parent, spec, catalog, now, ctx.newId("grt"));
  if (result.kind === "refused")
    throw new AuthorityError("FAILED_PRECONDITION", `${result.code}: ${result.message}`, {
      reason: result.code,
    });
  return record(ctx, result.grant, caller, { kind: "delegated", spec });
}

/**
 * RevokeGrant: the grant and every grant delegated from it (each revocation audited); their live
 * approvals end superseded (GRANT_REVOKED). Answers the ids revoked (an unknown id is NOT_FOUND).
 */
export async function revokeGrant(
  ctx: AuthorityContext,
  req: { readonly grantId: string; readonly reason: string },
  caller?: string,
): Promise<{ readonly revoked: readonly string[] }> {
  if (req.grantId === "") throw invalidRequest("grant_id", "is required");
  const now = ctx.now();
  const revoked = await ctx.store.revokeGrant(req.grantId, req.reason, now, caller);
  const reason = {
    code: "GRANT_REVOKED",
    message: "The grant this call was made under has been revoked.",
  } as const;
  if ((await ctx.store.supersedeApprovalsOf(revoked, reason, now)) > 0) ctx.approvalFeed.notify();
  return { revoked };
}

/** GetGrant: a recorded grant and its revocation state. */
export async function getGrant(ctx: AuthorityContext, grantId: string): Promise<StoredGrant> {
  if (grantId === "") throw invalidRequest("grant_id", "is required");
  const stored = await ctx.store.getGrant(grantId);
  if (!stored) throw new AuthorityError("NOT_FOUND", `no grant with id "${grantId.slice(0, 128)}"`);
  return stored;
}

/**
 * Signs, checks the token's size, then records (with its audit record and the caller): a token
 * larger than Authorize accepts is refused RESOURCE_EXHAUSTED with nothing stored or audited, and
 * a token never leaves for a grant the store lacks.
 */
async function record(
  ctx: AuthorityContext,
  grant: TaskGrant,
  caller: string | undefined,
  origin: GrantOrigin,
): Promise<IssuedGrant> {
  const token = await signGrantToken(grant, ctx.ring, {
    issuer: ctx.tokens.issuer,
    audience: ctx.tokens.audience,
  });
  const max = (ctx.limits ?? DEFAULT_AUTHORITY_LIMITS).maxTokenBytes;
  if (token.length > max) {
    throw new AuthorityError(
      "RESOURCE_EXHAUSTED",
      `the grant's token would be ${token.length} bytes, more than the ${max} accepted (maxTokenBytes); nothing was issued`,
    );
  }
  await ctx.store.putGrant(grant, caller, origin);
  return { grant, token };
}
