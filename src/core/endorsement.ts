import type { Catalog } from "./catalog.js";
import type { JsonSchema } from "./json.js";

/**
 * A scoped endorsement: an approver's "this call and calls like it" — calls of one action under
 * exactly one grant, held for one requirement, whose arguments the `bounds` schema accepts — for
 * at most `maxCalls` calls until `expiresAt`. It only ever turns a call the grant would hold for
 * that requirement into an approved one; it never touches a deny, another action, another
 * requirement or another grant (not even the grant's children).
 */
export interface Endorsement {
  readonly id: string;
  readonly grantId: string;
  readonly owner: string;
  /** The grant's subject: the requester, who never endorses its own calls. */
  readonly subject: string;
  readonly actionId: string;
  readonly requirement: string;
  /** The rule over the run that held the endorsed call, when one did: only calls held by it are approved. */
  readonly rule?: string;
  /** A JSON Schema over the call's arguments, as the endorser wrote it (canonical JSON text). */
  readonly boundsJson: string;
  readonly maxCalls: number;
  readonly usedCalls: number;
  /** Unix seconds. */
  readonly createdAt: number;
  /** Unix seconds after which it no longer counts (never after the grant's own expiry). */
  readonly expiresAt: number;
  /** The one principal that endorses. */
  readonly endorsedBy: string;
  /** The approval it was minted from (one its endorser approved). */
  readonly approvalId: string;
  readonly status: EndorsementStatus;
  readonly revokedAt?: number;
  readonly revokedBy?: string;
}

export const ENDORSEMENT_STATUSES = ["active", "revoked"] as const;
export type EndorsementStatus = (typeof ENDORSEMENT_STATUSES)[number];

export const MAX_ENDORSEMENT_CALLS = 100;
export const MIN_ENDORSEMENT_SECONDS = 60;
export const MAX_ENDORSEMENT_SECONDS = 24 * 3600;
/** The most schema text an endorsement's bounds may hold. */
export const MAX_BOUNDS_BYTES = 8192;

/** Whether `e` may still approve a call at `now`: active, unexpired, with calls left. */
export function endorsementLive(e: Endorsement, now: number): boolean {
  return e.status === "active" && now < e.expiresAt && e.usedCalls < e.maxCalls;
}

/**
 * Whether the bounds accept `args` (pure). A bounds schema that cannot be compiled or checked
 * accepts nothing (fail closed: an endorsement never approves what it cannot read).
 */
export function boundsAccept(catalog: Catalog, bounds: JsonSchema, args: unknown): boolean {
  try {
    return catalog.schemas.compile(bounds).check(args).length === 0;
  } catch {
    return false;
  }
}

/**
 * The endorsements that approve a held call together (pure): live ones whose bounds accept the
 * call's arguments, one per distinct endorser (the first of each, in the order given), and only
 * when they reach `needed` — the requirement's approver count; else none. Each chosen endorser
 * must also still be one who could approve the call (`mayApprove`).
 */
export function endorsersFor(
  catalog: Catalog,
  endorsements: readonly Endorsement[],
  call: {
    readonly grantId: string;
    readonly actionId: string;
    readonly requirement: string;
    /** The rule over the run that holds the call, if any. */
    readonly rule?: string | undefined;
    readonly args: unknown;
  },
  needed: number,
  now: number,
  mayApprove: (endorser: string) => boolean,
): readonly Endorsement[] {
  const chosen = new Map<string, Endorsement>();
  for (const e of endorsements) {
    if (chosen.size >= needed) break;
    if (chosen.has(e.endorsedBy)) continue;
    if (e.grantId !== call.grantId || e.actionId !== call.actionId) continue;
    if (e.requirement !== call.requirement || !endorsementLive(e, now)) continue;
    if ((e.rule ?? "") !== (call.rule ?? "")) continue;
    if (!boundsAccept(catalog, parseBounds(e.boundsJson), call.args)) continue;
    if (!mayApprove(e.endorsedBy)) continue;
    chosen.set(e.endorsedBy, e);
  }
  return chosen.size >= needed ? [...chosen.values()] : [];
}

/** The bounds schema of a stored text; a text that is not JSON bounds nothing (`false`). */
export function parseBounds(text: string): JsonSchema {
  try {
    return JSON.parse(text) as JsonSchema;
  } catch {
    return false;
  }
}

/** What an endorsement minted approval records as its decider: `endorsement:<id>[,<id>…]`. */
export function endorsedDecider(ids: readonly string[]): string {
  return `endorsement:${ids.join(",")}`;
}
