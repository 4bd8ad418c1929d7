import type { ClientConfig, PromiseClient } from "./client.js";
import { createPromiseClient } from "./client.js";
import { ApprovalService } from "../gen/charter/v1/approval_pb.js";
import { AuthorityService } from "../gen/charter/v1/authority_pb.js";
import { CatalogService } from "../gen/charter/v1/catalog_pb.js";
import { GrantService } from "../gen/charter/v1/grant_pb.js";
import { KeyService } from "../gen/charter/v1/key_pb.js";

export * from "./client.js";
export { errorDetails, type ErrorDetails } from "./error-details.js";

/** One client per Charter service, sharing one configuration. */
export interface CharterClients {
  readonly catalog: PromiseClient<typeof CatalogService>;
  readonly authority: PromiseClient<typeof AuthorityService>;
  readonly grants: PromiseClient<typeof GrantService>;
  readonly approvals: PromiseClient<typeof ApprovalService>;
  readonly keys: PromiseClient<typeof KeyService>;
  close(): void;
}

/** Creates typed clients for every Charter service at one address. */
export function createCharterClients(config: ClientConfig): CharterClients {
  const catalog = createPromiseClient(CatalogService, config);
  const authority = createPromiseClient(AuthorityService, config);
  const grants = createPromiseClient(GrantService, config);
  const approvals = createPromiseClient(ApprovalService, config);
  const keys = createPromiseClient(KeyService, config);
  return {
    catalog,
    authority,
    grants,
    approvals,
    keys,
    close() {
      for (const c of [catalog, authority, grants, approvals, keys]) c.close();
    },
  };
}
