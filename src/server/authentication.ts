import {
  auditRefusedCall,
  authenticateApiKey,
  isRole,
  type AuthorityContext,
  type Principal,
  type RefusalTally,
  type Role,
  type SpiffeRoles,
  type UnauthenticatedRefusal,
} from "../authority/index.js";
import { accessOf, permits } from "./access.js";
import { withCaller, type CallContext } from "./call-context.js";
import type { ConnectionLedger } from "./connection-ledger.js";
import type { CallHandler, Interceptor } from "./interceptor.js";
import { RpcError } from "./rpc-error.js";
import { isSvidRefusal, svidCaller, type SvidRefusal } from "./spiffe.js";

/** How callers are recognised. */
export interface AuthenticationOptions {
  /** Client certificate subject CN -> roles (mutual TLS); a certificate CN not listed holds no role. */
  readonly certificateRoles: ReadonlyMap<string, readonly string[]>;
  /** Client certificate SPIFFE ID -> roles (`src/server/spiffe.ts`); an ID not covered is refused. */
  readonly spiffeRoles: SpiffeRoles;
  /**
   * Whether a call without credentials acts as the local operator (`admin`) now: protected mode
   * (`auth: none`, `src/app/auth-mode.ts`), which the store's first API key ends for good. Asked
   * at most once per turn of the event loop. Absent (`auth: keys`): such a call is refused.
   */
  readonly protectedMode?: () => Promise<boolean>;
  /**
   * Told which connections have had a call pass authentication, so that they are no longer
   * pre-auth (`createConnectionPool`). In protected mode every local caller is the local
   * operator, so there a connection stops being pre-auth at its first call of any kind.
   */
  readonly ledger?: ConnectionLedger;
  /**
   * Where UNAUTHENTICATED refusals go: aggregated per peer, RPC, reason and interval
   * (`createRefusalTally`), so a flood writes O(1) records a second. Absent: one record per call.
   */
  readonly refusals?: RefusalTally;
}

/** The principal every local caller acts as in protected mode. */
export const LOCAL_OPERATOR: Principal = {
  principal: "local",
  roles: ["admin"],
  protectedMode: true,
};

const UNAUTHENTICATED =
  "a valid API key is required (metadata authorization: Bearer <key>); an operator creates one on the server's data dir with `charter keys create --principal NAME --role ROLE`";

/**
 * Authenticates the caller and enforces the RPC's access rule (`src/server/access.ts`) before
 * the handler runs, then passes the context with `caller` set (`withCaller`) to `next`. Missing, malformed, unknown and
 * revoked keys are one answer, UNAUTHENTICATED; a known caller without the role is
 * PERMISSION_DENIED. Both are decided before the request is looked at, so neither says whether
 * a grant or an approval exists. RPCs authorized by a grant token, and public ones, skip it.
 */
export function authenticationInterceptor(
  ctx: Pick<AuthorityContext, "store" | "now" | "audit">,
  options: AuthenticationOptions,
): Interceptor {
  // Absent (auth: keys, or protected mode over at start), nothing is asked on any call.
  const inProtectedMode =
    options.protectedMode === undefined ? undefined : oncePerTurn(options.protectedMode);
  const ledger = options.ledger;
  const unauthenticated = (refusal: UnauthenticatedRefusal): Promise<void> =>
    options.refusals
      ? options.refusals.refused(refusal)
      : auditRefusedCall(ctx, { code: "UNAUTHENTICATED", ...refusal });
  const check: Interceptor = (next) => async (request, call) => {
    const access = accessOf(call.service, call.method);
    if (access === undefined)
      throw new RpcError("PERMISSION_DENIED", `${call.method.name} has no access rule`);
    if (access.kind !== "roles") {
      if (ledger && call.peer !== undefined && inProtectedMode && (await inProtectedMode()))
        ledger.authenticated(call.peer);
      return next(request, call);
    }
    const header = call.metadata.get("authorization");
    const caller = await identify(ctx, call, header, options, inProtectedMode);
    if (caller !== undefined && isSvidRefusal(caller)) {
      await unauthenticated({
        peer: call.peer,
        rpc: call.path,
        ...(caller.caller === undefined ? {} : { caller: caller.caller }),
        detail: caller.refused,
      });
      throw new RpcError("UNAUTHENTICATED", `client certificate refused: ${caller.refused}`);
    }
    // Both refusals are on the audit log (or counted for it) before they are answered (who, when known; never the credential).
    if (caller === undefined) {
      await unauthenticated({
        peer: call.peer,
        rpc: call.path,
        detail: header.length > 0 ? "an unknown, revoked or malformed API key" : "no credentials",
      });
      throw new RpcError("UNAUTHENTICATED", UNAUTHENTICATED);
    }
    if (!permits(access, caller.roles)) {
      const needs = `needs the role ${access.roles.join(" or ")} (or admin)`;
      await auditRefusedCall(ctx, {
        code: "PERMISSION_DENIED",
        rpc: call.path,
        caller: caller.principal,
        detail: needs,
      });
      throw new RpcError("PERMISSION_DENIED", `${call.method.name} ${needs}`);
    }
    if (ledger && call.peer !== undefined) ledger.authenticated(call.peer);
    return next(request, withCaller(call, caller));
  };
  if (ledger === undefined) return check;
  // While its caller is being authenticated, a connection is not closed to make room for others.
  return (next) => async (request, call) => {
    if (call.peer === undefined) return check(next)(request, call);
    const settle = ledger.calling(call.peer);
    const settled: CallHandler = (req, ctx) => {
      settle();
      return next(req, ctx);
    };
    try {
      return await check(settled)(request, call);
    } finally {
      settle();
    }
  };
}

/**
 * The caller: a bearer API key first, else a verified client certificate (its SPIFFE ID, else its
 * CN), else (protected mode) the local operator.
 */
async function identify(
  ctx: Pick<AuthorityContext, "store">,
  call: CallContext,
  header: ReturnType<CallContext["metadata"]["get"]>,
  options: AuthenticationOptions,
  inProtectedMode: (() => Promise<boolean>) | undefined,
): Promise<Principal | SvidRefusal | undefined> {
  if (header.length > 0) {
    if (header.length !== 1 || typeof header[0] !== "string") return undefined;
    const m = /^Bearer\s+(\S+)$/i.exec(header[0].trim());
    return m?.[1] === undefined ? undefined : authenticateApiKey(ctx, m[1]);
  }
  const cert = call.clientCertificate;
  if (cert !== undefined) {
    const svid = svidCaller(cert, options.spiffeRoles);
    if (svid !== undefined) return svid;
    if (cert.subjectCommonName === "") return undefined;
    const roles: Role[] = (options.certificateRoles.get(cert.subjectCommonName) ?? []).filter(
      isRole,
    );
    return { principal: cert.subjectCommonName, roles };
  }
  if (inProtectedMode && (await inProtectedMode())) return LOCAL_OPERATOR;
  return undefined;
}

/**
 * `read`, shared by the calls of one turn of the event loop (as the store's file-identity check
 * is): the calls that arrive together ask once, and the next turn asks again. A failed read
 * fails every call that shared it (closed: never protected mode).
 */
function oncePerTurn<T>(read: () => Promise<T>): () => Promise<T> {
  let answer: Promise<T> | undefined;
  return () => {
    if (answer === undefined) {
      answer = read();
      setImmediate(() => {
        answer = undefined;
      }).unref();
    }
    return answer;
  };
}
