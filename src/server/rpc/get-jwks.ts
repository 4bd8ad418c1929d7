import { publishedKeys, type AuthorityContext } from "../../authority/index.js";
import type { KeyService } from "../../gen/charter/v1/key_pb.js";
import type { ServiceHandlers } from "../router.js";

/** GetJwks: the public keys that verify grant tokens and receipts. */
export function getJwks(ctx: AuthorityContext): ServiceHandlers<typeof KeyService>["getJwks"] {
  return async () => {
    const jwks = publishedKeys(ctx);
    return {
      jwksJson: JSON.stringify(jwks),
      keys: jwks.keys.map((k) => ({ kid: k.kid, kty: k.kty, crv: k.crv, x: k.x, alg: k.alg, use: k.use })),
    };
  };
}
