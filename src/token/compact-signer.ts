import { KeyObject } from "node:crypto";
import type { CryptoKey } from "jose";

/**
 * A signing key as node's `crypto.sign` makes compact JWS with it: its Node key object, made
 * once, and its protected header `{alg: "EdDSA", kid, typ}` encoded once per `typ`. The key ring
 * makes one with each signing key it loads, so it lives and goes with the ring's key.
 */
export class CompactSigner {
  readonly key: KeyObject;
  readonly #headers = new Map<string, string>();

  constructor(
    readonly kid: string,
    privateKey: CryptoKey,
  ) {
    this.key = KeyObject.from(privateKey);
  }

  /** The base64url protected header of a token of type `typ` signed with this key. */
  header(typ: string): string {
    let header = this.#headers.get(typ);
    if (header === undefined) {
      header = Buffer.from(JSON.stringify({ alg: "EdDSA", kid: this.kid, typ })).toString(
        "base64url",
      );
      this.#headers.set(typ, header);
    }
    return header;
  }
}
