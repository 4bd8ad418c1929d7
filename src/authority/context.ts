import type { ApproverDirectory } from "../core/approvers.js";
import type { Catalog } from "../core/catalog.js";
import type { Policy } from "../core/policy.js";
import type { Store } from "../store/port.js";
import type { DecisionInputSealer, GrantVerifier, KeyRing } from "../token/index.js";
import type { AuditCheckpointer } from "./audit.js";
import type { AuthorityCaches } from "./caches.js";
import type { Notifier } from "./notifier.js";
import type { AuthorityLimits } from "./limits.js";
import type { ApprovalLinkSettings } from "./approval-links.js";

/** The catalog and policy in force, loaded and checked together; replaced as a pair on reload. */
export interface PolicySet {
  readonly catalog: Catalog;
  readonly policy: Policy;
  /**
   * The candidate policy decided beside `policy` (`shadowPolicy`, docs/policy-testing.md): checked
   * against the same catalog and reloaded with it; its disagreements are recorded, never applied.
   */
  readonly shadow?: Policy;
  /** Who approves which requirements, for whom (`approvers`); read with the pair, checked against its policy. */
  readonly approvers?: ApproverDirectory;
}

/** Token settings shared by signing and verification. */
export interface TokenSettings {
  readonly issuer: string;
  readonly audience: string;
  readonly receiptTtlSeconds: number;
}

/** The prefixes of the ids Charter mints: grants, decisions and approvals. */
export type IdPrefix = "grt" | "dec" | "apr" | "end";

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
  /** How long a new approval waits for its decision and then for its use (never past its grant's expiry). */
  readonly approvalTtlSeconds: number;
  /** Woken whenever this process changes an approval, so that watchers answer at once. */
  readonly approvalFeed: Notifier;
  /** Signs checkpoints of the audit chain head. */
  readonly audit: AuditCheckpointer;
  /** What this context caches (rendered catalogs, ancestor grants…); emptied when it is disposed. */
  readonly caches: AuthorityCaches;
  /**
   * How decision inputs are kept for `charter replay`: each decision's arguments and run are
   * sealed (`sealer`) and stored with its record while `retainSeconds` > 0; 0 keeps none.
   */
  readonly decisionInputs: {
    readonly sealer: DecisionInputSealer;
    readonly retainSeconds: number;
  };
  /** Single-use approval links (the inbox's); absent where no inbox is configured. */
  readonly approvalLinks?: ApprovalLinkSettings;
  /** Argument and token limits; `DEFAULT_AUTHORITY_LIMITS` when absent. */
  readonly limits?: AuthorityLimits;
  /** Unix seconds. */
  now(): number;
  /** A fresh unique id such as `dec_<uuid>`. */
  newId(prefix: IdPrefix): string;
}
