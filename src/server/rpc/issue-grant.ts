import { compose, type ComposeRequest } from "../../core/compose.js";
import { GrantMode } from "../../gen/charter/v1/common_pb.js";
import type { GrantService } from "../../gen/charter/v1/grant_pb.js";
import { modeFromProto } from "../../interop/enums.js";
import { grantToProto } from "../../interop/grant-codec.js";
import { signGrantToken } from "../../token/index.js";
import type { ServerContext } from "../context.js";
import type { ServiceHandlers } from "../router.js";
import { RpcError, invalidField } from "../rpc-error.js";

/** The longest lifetime a caller may ask for; the policy's runtime limits usually cut it shorter. */
export const MAX_TTL_SECONDS = 366 * 24 * 3600;

/** IssueGrant: compose a task grant from the policy, record it, and sign its token. */
export function issueGrant(ctx: ServerContext): ServiceHandlers<typeof GrantService>["issueGrant"] {
  return async (req) => {
    for (const field of ["profile", "subject", "owner"] as const) {
      if (req[field].trim() === "") throw invalidField(field, "is required");
    }
    req.requestedActions.forEach((a, i) => {
      if (a === "") throw invalidField(`requested_actions[${i}]`, "must not be empty");
    });
    let ttlSeconds: number | undefined;
    if (req.ttlSeconds !== undefined) {
      if (req.ttlSeconds <= 0n || req.ttlSeconds > BigInt(MAX_TTL_SECONDS)) throw invalidField("ttl_seconds", `must be between 1 and ${MAX_TTL_SECONDS}`);
      ttlSeconds = Number(req.ttlSeconds);
    }
    if (!Object.values(GrantMode).includes(req.mode)) throw invalidField("mode", `unknown value ${String(req.mode)}`);
    const mode = modeFromProto(req.mode);
    const request: ComposeRequest = {
      profile: req.profile,
      subject: req.subject,
      owner: req.owner,
      purpose: req.purpose,
      requestedActions: req.requestedActions,
      ...(ttlSeconds === undefined ? {} : { ttlSeconds }),
      ...(mode === undefined ? {} : { mode }),
    };
    const { catalog, policy } = ctx.authority();
    const result = compose(request, policy, catalog, ctx.now(), ctx.newId("grt"));
    switch (result.kind) {
      case "unknown_action":
        if (result.source === "request") throw invalidField("requested_actions", `unknown action "${result.actionId}"`);
        throw new RpcError("FAILED_PRECONDITION", `UNKNOWN_ACTION: source "${result.source}" names "${result.actionId}", which the catalog lacks`);
      case "denied":
        if (result.code === "UNKNOWN_PROFILE") throw invalidField("profile", result.message);
        if (result.code === "INVALID_REQUEST") throw invalidField("ttl_seconds", result.message);
        throw new RpcError("FAILED_PRECONDITION", `${result.code}: ${result.message}`);
      case "granted": {
        await ctx.store.putGrant(result.grant);
        const grantToken = await signGrantToken(result.grant, ctx.ring, { issuer: ctx.tokens.issuer, audience: ctx.tokens.audience });
        return { grant: grantToProto(result.grant), grantToken };
      }
    }
  };
}
