import { create } from "@bufbuild/protobuf";
import { publishedKeys, type AuthorityContext } from "../../authority/index.js";
import {
  GetJwksResponseSchema,
  type GetJwksResponse,
  type KeyService,
} from "../../gen/charter/v1/key_pb.js";
import type { ServiceHandlers } from "../router.js";

/**
 * GetJwks: the public keys that verify grant tokens and receipts. A key never changes under its
 * kid, so the response is made again only when the set of kids changes (a rotation, a reload);
 * the same message is answered otherwise, and the router encodes it once.
 */
export function getJwks(ctx: AuthorityContext): ServiceHandlers<typeof KeyService>["getJwks"] {
  let last: { readonly kids: string; readonly response: GetJwksResponse } | undefined;
  return async () => {
    const jwks = publishedKeys(ctx);
    const kids = jwks.keys.map((k) => k.kid).join(" ");
    if (last?.kids !== kids) {
      const keys = jwks.keys.map((k) => ({
        kid: k.kid,
        kty: k.kty,
        crv: k.crv,
        x: k.x,
        alg: k.alg,
        use: k.use,
      }));
      last = {
        kids,
        response: create(GetJwksResponseSchema, { jwksJson: JSON.stringify(jwks), keys }),
      };
    }
    return last.response;
  };
}
