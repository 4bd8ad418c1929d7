import type { DelegationSpec } from "../core/delegate.js";
import { MAX_STEP_ID_LENGTH } from "../core/step.js";
import type { GrantLimits } from "../core/grant.js";
import { isJsonObject, type JsonObject, type JsonSchema } from "../core/json.js";
import type { ActionCaveats, Rule } from "../core/policy.js";
import type { ActionCaveats as PbActionCaveats } from "../gen/charter/v1/common_pb.js";
import { GrantMode } from "../gen/charter/v1/common_pb.js";
import type { DelegateGrantRequest, RevokeGrantRequest } from "../gen/charter/v1/grant_pb.js";
import { DecodeError } from "./decode-error.js";
import { modeFromProto } from "./enums.js";

/** A DelegateGrant request in domain terms: the parent token, the spec, and tools named as the model names them. */
export interface DelegateRequest {
  readonly parentToken: string;
  readonly spec: DelegationSpec;
  /** Tool names the child allows; the application layer resolves them to action ids. */
  readonly allowedTools: readonly string[];
  /** Tool names the child allows only with approval. */
  readonly approvalRequiredTools: readonly string[];
}

/** The source recorded on rules a delegation adds (the proto may leave it empty). */
export const DELEGATION_SOURCE = "delegation";

/**
 * A DelegateGrant request as the domain's delegation spec. JSON-valued caveats are parsed here
 * (a malformed one is a DecodeError naming it, e.g. `caveats["web.search"].binds_json`); the
 * lifetime and limits keep their sign and size, so the core's narrowing checks see what was asked.
 */
export function delegateRequestFromProto(req: DelegateGrantRequest): DelegateRequest {
  const mode = modeFromProto(req.mode);
  if (mode === undefined && req.mode !== GrantMode.UNSPECIFIED)
    throw new DecodeError("mode", `unknown value ${String(req.mode)}`);
  if (req.runId.length > MAX_STEP_ID_LENGTH)
    throw new DecodeError("run_id", `is longer than ${MAX_STEP_ID_LENGTH} characters`);
  const caveats: Record<string, Partial<ActionCaveats>> = {};
  for (const [actionId, c] of Object.entries(req.caveats))
    caveats[actionId] = caveatsFromProto(c, `caveats["${actionId.slice(0, 128)}"]`);
  const spec: DelegationSpec = {
    subject: req.subject,
    ...(req.purpose === "" ? {} : { purpose: req.purpose }),
    allowed: [...req.allowed],
    approvalRequired: [...req.approvalRequired],
    ...(req.ttlSeconds === undefined ? {} : { ttlSeconds: Number(req.ttlSeconds) }),
    ...(req.limits === undefined ? {} : { limits: limitsFromProto(req.limits) }),
    ...(Object.keys(caveats).length === 0 ? {} : { caveats }),
    ...(mode === undefined ? {} : { mode }),
    ...(req.runId === "" ? {} : { runId: req.runId }),
  };
  return {
    parentToken: req.parentToken,
    spec,
    allowedTools: [...req.allowedTools],
    approvalRequiredTools: [...req.approvalRequiredTools],
  };
}

/** A RevokeGrant request in domain terms. */
export function revokeRequestFromProto(req: RevokeGrantRequest): {
  readonly grantId: string;
  readonly reason: string;
} {
  return { grantId: req.grantId, reason: req.reason };
}

function limitsFromProto(
  limits: NonNullable<DelegateGrantRequest["limits"]>,
): Partial<GrantLimits> {
  return {
    ...(limits.maxCalls === undefined ? {} : { maxCalls: limits.maxCalls }),
    ...(limits.maxCallsPerAction === undefined
      ? {}
      : { maxCallsPerAction: limits.maxCallsPerAction }),
    maxDelegationDepth: limits.maxDelegationDepth,
  };
}

function caveatsFromProto(c: PbActionCaveats, field: string): Partial<ActionCaveats> {
  const constraints = c.constraintsJson.map((text, i) =>
    schemaOf(text, `${field}.constraints_json[${i}]`),
  );
  const binds = c.bindsJson === "" ? {} : objectOf(c.bindsJson, `${field}.binds_json`);
  const rules = c.rules.map((r, i): Rule => {
    const when = schemaOf(r.whenJson, `${field}.rules[${i}].when_json`);
    const source = r.source === "" ? DELEGATION_SOURCE : r.source;
    if (r.id !== "" || r.runJson !== "")
      throw new DecodeError(
        `${field}.rules[${i}].run_json`,
        "rules over the run come from the policy; a delegation cannot add one",
      );
    switch (r.then.case) {
      case "deny":
        return { when, then: "deny", reason: r.then.value, source };
      case "requireApproval":
        return { when, then: "require_approval", requirement: r.then.value, source };
      case undefined:
        throw new DecodeError(
          `${field}.rules[${i}].then`,
          "is required (deny or require_approval)",
        );
    }
  });
  return { constraints, binds, rules };
}

function parse(text: string, field: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new DecodeError(field, "is not JSON");
  }
}

function schemaOf(text: string, field: string): JsonSchema {
  const value = parse(text, field);
  if (typeof value === "boolean" || isJsonObject(value)) return value;
  throw new DecodeError(field, "must be a JSON Schema (an object or a boolean)");
}

function objectOf(text: string, field: string): JsonObject {
  const value = parse(text, field);
  if (isJsonObject(value)) return value;
  throw new DecodeError(field, "must be a JSON object");
}
