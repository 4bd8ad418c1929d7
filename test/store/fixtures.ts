import type { Approval } from "../../src/core/approval.js";
import type { Endorsement } from "../../src/core/endorsement.js";
import type { TaskGrant } from "../../src/core/grant.js";
import type {
  ApprovalDraft,
  DecisionRecord,
  StoredApiKey,
  StoredKey,
} from "../../src/store/port.js";

export const ISSUED_AT = 1_750_000_000;

/**
 * A realistic grant for store tests: caveats with constraints, binds and rules, optional limits,
 * non-ASCII text. With a parent it is a delegated child (chain, rootId and depth follow).
 */
export function makeGrant(
  id: string,
  parent?: TaskGrant,
  overrides: Partial<TaskGrant> = {},
): TaskGrant {
  return {
    id,
    rootId: parent?.rootId ?? id,
    parentId: parent?.id ?? null,
    chain: parent === undefined ? [] : [...parent.chain, parent.id],
    subject: `agent:${id}`,
    owner: "owner:zoë",
    purpose: "triage the inbox — «urgent» only",
    profile: "support",
    issuedAt: ISSUED_AT,
    expiresAt: ISSUED_AT + 900,
    catalogVersion: "2025-06-01",
    allowed: ["email.read", "email.send"],
    approvalRequired: ["payments.refund"],
    denied: ["email.delete"],
    caveats: {
      "email.send": {
        constraints: [
          { type: "object", properties: { to: { type: "string", pattern: "@example\\.com$" } } },
        ],
        binds: { from: "support@example.com", cc: null, priority: 2.5 },
        rules: [
          {
            when: { properties: { to: { const: "ceo@example.com" } } },
            then: "deny",
            reason: "no",
            source: "base",
          },
        ],
      },
    },
    limits: { maxCalls: 100, maxDelegationDepth: 3 },
    mode: "live",
    sources: ["base", "support"],
    ...overrides,
  };
}

/** A signing key record; the JWK text is opaque to the store. */
export function makeKey(kid: string, createdAt: number, retiredAt?: number): StoredKey {
  const key: StoredKey = {
    kid,
    alg: "EdDSA",
    publicJwk: JSON.stringify({ kty: "OKP", crv: "Ed25519", x: `x-${kid}` }),
    privateJwk: JSON.stringify({ kty: "OKP", crv: "Ed25519", x: `x-${kid}`, d: `d-${kid}` }),
    createdAt,
  };
  return retiredAt === undefined ? key : { ...key, retiredAt };
}

/** A recorded allow of a call, with every required field filled in. */
export function makeDecision(
  decisionId: string,
  overrides: Partial<DecisionRecord> = {},
): DecisionRecord {
  return {
    decisionId,
    decidedAt: ISSUED_AT + 10,
    grantId: "g-root",
    rootId: "g-root",
    subject: "agent:g-root",
    actionId: "email.send",
    toolName: "send_email",
    callId: "call-1",
    callDigest: "sha256:4f2c",
    decision: "allow",
    catalogVersion: "2025-06-01",
    policyVersion: "policy-1",
    ...overrides,
  };
}

/** An API key record with a distinct hash per id. */
export function makeApiKey(id: string, overrides: Partial<StoredApiKey> = {}): StoredApiKey {
  const hash = Buffer.from(id).toString("hex").padEnd(64, "0").slice(0, 64);
  return {
    id,
    principal: "orchestrator",
    roles: ["issuer"],
    secretHash: hash,
    createdAt: 10,
    ...overrides,
  };
}

/** A pending approval of one call, as the application layer drafts it. */
export function makeApproval(id: string, overrides: Partial<Approval> = {}): ApprovalDraft {
  return {
    approval: {
      id,
      grantId: "g-root",
      rootId: "g-root",
      subject: "agent:g-root",
      owner: "owner:zoë",
      actionId: "payments.refund",
      toolName: "refund",
      requirement: "owner",
      requiredApprovals: 1,
      callDigest: `digest-${id}`,
      summary: [
        { path: "/amount", shown: "value", valueJson: "120", truncated: false },
        { path: "/note", shown: "digest", digest: "sha256:ab" },
        { path: "/secret", shown: "hidden" },
      ],
      status: "pending",
      createdAt: ISSUED_AT + 10,
      expiresAt: ISSUED_AT + 310,
      approvedBy: [],
      ...overrides,
    },
    argumentsJson: JSON.stringify({ amount: 120, note: "n", secret: "s3cr3t-value" }),
  };
}

/** An active endorsement of g-root's payments.refund calls held for "owner". */
export function makeEndorsement(id: string, overrides: Partial<Endorsement> = {}): Endorsement {
  return {
    id,
    grantId: "g-root",
    owner: "owner:zoë",
    subject: "agent:g-root",
    actionId: "payments.refund",
    requirement: "owner",
    boundsJson: '{"type":"object"}',
    maxCalls: 3,
    usedCalls: 0,
    createdAt: ISSUED_AT + 10,
    expiresAt: ISSUED_AT + 610,
    endorsedBy: "owner:zoë",
    approvalId: "apr_src",
    status: "active",
    ...overrides,
  };
}
