import {
  isRole,
  parseSpiffeId,
  spiffeRolesOf,
  type Principal,
  type SpiffeRoles,
} from "../authority/index.js";
import type { ClientCertificate } from "./call-context.js";

/** A client certificate refused as an X.509-SVID: why, and the SPIFFE ID when it was one. */
export interface SvidRefusal {
  readonly refused: string;
  /** The certificate's valid SPIFFE ID (refused because no entry maps it); absent otherwise. */
  readonly caller?: string;
}

const SPIFFE_SCHEME = /^spiffe:/i;

/**
 * The caller a verified client certificate names by its SPIFFE ID (X.509-SVID), or why it is
 * refused; undefined when no URI SAN has the `spiffe` scheme (the CN names the caller then). A
 * certificate with a SPIFFE ID is named by it alone, never by its CN: a certificate that is a CA,
 * has more than one URI SAN, a malformed ID, an ID without a path, or an ID `roles` does not cover
 * is refused, not given fewer roles.
 */
export function svidCaller(
  cert: ClientCertificate,
  roles: SpiffeRoles,
): Principal | SvidRefusal | undefined {
  const uris = cert.uris;
  if (uris === undefined) return { refused: "a client certificate whose SANs cannot be read" };
  if (!uris.some((uri) => SPIFFE_SCHEME.test(uri))) return undefined;
  if (uris.length !== 1)
    return { refused: "a client certificate with more than one URI SAN (an X.509-SVID has one)" };
  if (cert.ca) return { refused: "a CA certificate, not a leaf X.509-SVID" };
  const id = parseSpiffeId(uris[0] ?? "");
  if (typeof id === "string") return { refused: `a client certificate whose SPIFFE ID ${id}` };
  if (id.path === "")
    return { refused: "a client certificate whose SPIFFE ID has no path (a trust domain's)" };
  const held = spiffeRolesOf(roles, id);
  if (held === undefined)
    return { refused: "a SPIFFE ID that tlsSpiffeRoles does not map", caller: id.text };
  return { principal: id.text, roles: held.filter(isRole) };
}

/** Whether `svidCaller` refused the certificate. */
export function isSvidRefusal(value: Principal | SvidRefusal): value is SvidRefusal {
  return "refused" in value;
}
