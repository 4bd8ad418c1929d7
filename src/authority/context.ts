import type { Catalog } from "../core/catalog.js";
import type { Policy } from "../core/policy.js";
import type { Store } from "../store/port.js";
import type { GrantVerifier, KeyRing } from "../token/index.js";
import type { AuthorityLimits } from "./limits.js";

/** The catalog and policy in force, loaded and checked together; replaced as a pair on reload. */
export interface PolicySet {
  readonly catalog: Catalog;
  readonly policy: Policy;
}

/** Token settings shared by signing and verification. */
export interface TokenSettings {
  readonly issuer: string;
  readonly audience: string;
  readonly receiptTtlSeconds: number;
}

/** The prefixes of the ids Charter mints: grants and decisions. */
export type IdPrefix = "grt" | "dec";

/**
 * Everything the application layer works with, built once from configuration (see
 * `createAppContext` in `src/app`) and shared by the server, the CLI, benchmarks and tests.
 */
export interface AuthorityContext {
  /** The pair in force now. A request reads it once, so a reload mid-request is not seen by it. */
  policySet(): PolicySet;
  readonly store: Store;
  readonly ring: KeyRing;
  readonly verifier: GrantVerifier;
  readonly tokens: TokenSettings;
  /** The most calls one batch may carry. */
  readonly maxBatch: number;
  /** Argument and token limits; `DEFAULT_AUTHORITY_LIMITS` when absent. */
  readonly limits?: AuthorityLimits;
  /** Unix seconds. */
  now(): number;
  /** A fresh unique id such as `dec_<uuid>`. */
  newId(prefix: IdPrefix): string;
}
