import type { DescMethod, DescService } from "@bufbuild/protobuf";
import type { GenService, GenServiceMethods } from "@bufbuild/protobuf/codegenv2";
import type { Role } from "../authority/index.js";
import { ApprovalService } from "../gen/charter/v1/approval_pb.js";
import { AuthorityService } from "../gen/charter/v1/authority_pb.js";
import { CatalogService } from "../gen/charter/v1/catalog_pb.js";
import { GrantService } from "../gen/charter/v1/grant_pb.js";
import { KeyService } from "../gen/charter/v1/key_pb.js";

/**
 * Who may call an RPC: anyone (`public`); whoever holds the grant token the request carries
 * (`grant-token`: the RPC checks the token itself); or a caller holding one of `roles` (`admin`
 * always may).
 */
export type Access =
  | { readonly kind: "public" }
  | { readonly kind: "grant-token" }
  | { readonly kind: "roles"; readonly roles: readonly Role[] };

/** One access rule per method of a generated service: a method without one does not compile. */
export type ServiceAccess<S extends GenService<GenServiceMethods>> = {
  readonly [K in keyof S["method"]]: Access;
};

const PUBLIC: Access = { kind: "public" };
const GRANT_TOKEN: Access = { kind: "grant-token" };
const roles = (...r: Role[]): Access => ({ kind: "roles", roles: r });

const ISSUER = roles("issuer");
const GATEWAY = roles("gateway");
const APPROVER = roles("approver");
/** Only `admin`: whoever mints a link decides who may answer as whom. */
const ADMIN = roles("admin");

/** The access rule of every Charter RPC, by service. */
export const CATALOG_ACCESS: ServiceAccess<typeof CatalogService> = { getCatalog: GRANT_TOKEN };
export const AUTHORITY_ACCESS: ServiceAccess<typeof AuthorityService> = {
  authorize: GATEWAY,
  batchAuthorize: GATEWAY,
  authorizeTurn: GATEWAY,
  reportResult: GATEWAY,
};
export const GRANT_ACCESS: ServiceAccess<typeof GrantService> = {
  issueGrant: ISSUER,
  delegateGrant: ISSUER,
  revokeGrant: ISSUER,
  getGrant: roles("issuer", "auditor"),
};
/** Approvers reach only the approvals of grants whose owner is their principal: that check is the approval layer's. */
export const APPROVAL_ACCESS: ServiceAccess<typeof ApprovalService> = {
  listApprovals: APPROVER,
  getApproval: APPROVER,
  decideApproval: APPROVER,
  watchApprovals: APPROVER,
  endorseApproval: APPROVER,
  listEndorsements: APPROVER,
  revokeEndorsement: APPROVER,
  createApprovalLink: ADMIN,
};
export const KEY_ACCESS: ServiceAccess<typeof KeyService> = { getJwks: PUBLIC };

/** Each Charter service with its rules; health and reflection are served apart and are public. */
export const ACCESS_TABLE: readonly (readonly [DescService, Readonly<Record<string, Access>>])[] = [
  [CatalogService, CATALOG_ACCESS],
  [AuthorityService, AUTHORITY_ACCESS],
  [GrantService, GRANT_ACCESS],
  [ApprovalService, APPROVAL_ACCESS],
  [KeyService, KEY_ACCESS],
];

const BY_PATH: ReadonlyMap<string, Access> = new Map(
  ACCESS_TABLE.flatMap(([service, rules]) =>
    service.methods.map(
      (m) => [`/${service.typeName}/${m.name}`, rules[m.localName] as Access] as const,
    ),
  ),
);

/** The rules by the generated method descriptors themselves: the per-call lookup builds no string. */
const BY_METHOD: ReadonlyMap<DescMethod, Access> = new Map(
  ACCESS_TABLE.flatMap(([service, rules]) =>
    service.methods.map((m) => [m, rules[m.localName] as Access] as const),
  ),
);

/** The rule of a method; undefined for a method the table lacks (the interceptor then refuses the call). */
export function accessOf(service: DescService, method: DescMethod): Access | undefined {
  return BY_METHOD.get(method) ?? BY_PATH.get(`/${service.typeName}/${method.name}`);
}

/**
 * Whether a caller holding `held` may call an RPC whose rule is `access`. An `approve:<requirement>`
 * role opens what `approver` opens (the approvals layer then limits it to that requirement).
 */
export function permits(access: Access, held: readonly Role[]): boolean {
  if (access.kind !== "roles") return true;
  return (
    held.includes("admin") ||
    access.roles.some(
      (r) => held.includes(r) || (r === "approver" && held.some((h) => h.startsWith("approve:"))),
    )
  );
}
