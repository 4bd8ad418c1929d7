import type { Logger } from "pino";
import type { Catalog } from "../core/catalog.js";
import type { Policy } from "../core/policy.js";
import type { Store } from "../store/port.js";
import type { GrantVerifier, KeyRing } from "../token/index.js";

/** The catalog and policy in force; replaced as a pair on reload. */
export interface Authority {
  readonly catalog: Catalog;
  readonly policy: Policy;
}

/** Token settings shared by signing and verification. */
export interface TokenSettings {
  readonly issuer: string;
  readonly audience: string;
  readonly receiptTtlSeconds: number;
}

/** Everything an RPC handler may use. Handlers read the authority per call, so a reload is seen at once. */
export interface ServerContext {
  authority(): Authority;
  readonly store: Store;
  readonly ring: KeyRing;
  readonly verifier: GrantVerifier;
  readonly tokens: TokenSettings;
  /** Unix seconds. */
  now(): number;
  /** A fresh unique id with a prefix such as `grt` or `dec`. */
  newId(prefix: string): string;
  readonly log: Logger;
  /** The most calls one BatchAuthorize may carry. */
  readonly maxBatch: number;
}
