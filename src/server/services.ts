import type { Logger } from "pino";
import { ApprovalService, file_charter_v1_approval } from "../gen/charter/v1/approval_pb.js";
import { AuthorityService, file_charter_v1_authority } from "../gen/charter/v1/authority_pb.js";
import { CatalogService, file_charter_v1_catalog } from "../gen/charter/v1/catalog_pb.js";
import { GrantService, file_charter_v1_grant } from "../gen/charter/v1/grant_pb.js";
import { KeyService, file_charter_v1_key } from "../gen/charter/v1/key_pb.js";
import type { AuthorityContext } from "../authority/index.js";
import { bindService, type BindOptions, type ServiceBinding } from "./router.js";
import { authorize } from "./rpc/authorize.js";
import { authorizeTurn } from "./rpc/authorize-turn.js";
import { reportResult } from "./rpc/report-result.js";
import { batchAuthorize } from "./rpc/batch-authorize.js";
import { createApprovalLink } from "./rpc/create-approval-link.js";
import { decideApproval } from "./rpc/decide-approval.js";
import { delegateGrant } from "./rpc/delegate-grant.js";
import { endorseApproval } from "./rpc/endorse-approval.js";
import { getApproval } from "./rpc/get-approval.js";
import { getCatalog } from "./rpc/get-catalog.js";
import { getGrant } from "./rpc/get-grant.js";
import { getJwks } from "./rpc/get-jwks.js";
import { issueGrant } from "./rpc/issue-grant.js";
import { listApprovals } from "./rpc/list-approvals.js";
import { listEndorsements } from "./rpc/list-endorsements.js";
import { revokeEndorsement } from "./rpc/revoke-endorsement.js";
import { revokeGrant } from "./rpc/revoke-grant.js";
import { watchApprovals, type WatchLimits } from "./rpc/watch-approvals.js";

/** The generated files of the public contract, for server reflection. */
export const CONTRACT_FILES = [
  file_charter_v1_catalog,
  file_charter_v1_authority,
  file_charter_v1_grant,
  file_charter_v1_approval,
  file_charter_v1_key,
];

/**
 * Every Charter service with the handlers implemented so far; the rest answer UNIMPLEMENTED.
 * `options` (interceptors, shutdown signal, log) apply to every service; a Logger alone means
 * "log every call". `watchLimits` caps open WatchApprovals streams (defaults when absent).
 */
export function charterServices(
  ctx: AuthorityContext,
  options: BindOptions | Logger,
  watchLimits?: WatchLimits,
): ServiceBinding[] {
  return [
    bindService(CatalogService, { getCatalog: getCatalog(ctx) }, options),
    bindService(
      AuthorityService,
      {
        authorize: authorize(ctx),
        batchAuthorize: batchAuthorize(ctx),
        authorizeTurn: authorizeTurn(ctx),
        reportResult: reportResult(ctx),
      },
      options,
    ),
    bindService(
      GrantService,
      {
        issueGrant: issueGrant(ctx),
        delegateGrant: delegateGrant(ctx),
        revokeGrant: revokeGrant(ctx),
        getGrant: getGrant(ctx),
      },
      options,
    ),
    bindService(
      ApprovalService,
      {
        listApprovals: listApprovals(ctx),
        getApproval: getApproval(ctx),
        decideApproval: decideApproval(ctx),
        watchApprovals: watchApprovals(ctx, watchLimits),
        endorseApproval: endorseApproval(ctx),
        listEndorsements: listEndorsements(ctx),
        revokeEndorsement: revokeEndorsement(ctx),
        createApprovalLink: createApprovalLink(ctx),
      },
      options,
    ),
    bindService(KeyService, { getJwks: getJwks(ctx) }, options),
  ];
}
