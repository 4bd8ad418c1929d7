import { randomBytes } from "node:crypto";
import type { Approval } from "../core/approval.js";
import { answerProblem } from "../core/approvers.js";
import type { ApprovalLink } from "../store/port.js";
import { approverActor, decideApproval, getApproval } from "./approvals.js";
import type { AuthorityContext } from "./context.js";
import { AuthorityError, invalidRequest } from "./errors.js";
import { nativeSha256Hex } from "./sha256.js";

/** Where links point and how long they last: the inbox's settings, as the application layer needs them. */
export interface ApprovalLinkSettings {
  /** Seconds a link stays valid (never past its approval's expiry). */
  readonly ttlSeconds: number;
  /** The inbox's base URL (`https://host:port`), once known; undefined while no inbox serves. */
  baseUrl(): Promise<string | undefined>;
}

/** A link token: 32 random bytes, base64url (43 characters). */
const TOKEN = /^[A-Za-z0-9_-]{43}$/;
const MAX_PRINCIPAL = 256;

/** The one thing stored of a token: its SHA-256, lower-case hex. */
export function linkTokenHash(token: string): string {
  return nativeSha256Hex(token);
}

/** The URL of a link: `<base>/l/<token>`. */
export function approvalLinkUrl(base: string, token: string): string {
  return `${base.replace(/\/+$/, "")}/l/${token}`;
}

/**
 * Makes a single-use link that lets `approver` answer one pending approval: a fresh random token,
 * of which only the hash is stored, valid for the inbox's `ttlSeconds` (never past the
 * approval's expiry). Refuses an approver who could not answer this approval (as
 * `approverActor` and the approver directory say now), so a link that could never decide is
 * never sent.
 */
export async function createApprovalLink(
  ctx: AuthorityContext,
  req: { readonly approvalId: string; readonly approver: string },
): Promise<{ readonly url: string; readonly expiresAt: number }> {
  const approver = req.approver.trim();
  if (approver === "") throw invalidRequest("approver", "is required");
  if (approver.length > MAX_PRINCIPAL)
    throw invalidRequest("approver", `must be at most ${MAX_PRINCIPAL} characters`);
  const settings = ctx.approvalLinks;
  const base = await settings?.baseUrl();
  if (settings === undefined || base === undefined)
    throw new AuthorityError(
      "FAILED_PRECONDITION",
      "approval links need the inbox: set inboxListen (and inboxPublicUrl when its port is 0 or it sits behind a proxy)",
    );
  const approval = await getApproval(ctx, req.approvalId);
  if (approval.status !== "pending")
    throw new AuthorityError(
      "FAILED_PRECONDITION",
      `approval ${approval.id} is ${approval.status}, not pending; a link could not decide it`,
    );
  const { policy, approvers: directory } = ctx.policySet();
  const problem = answerProblem(policy, approval, approverActor(approver), "approve", directory);
  if (problem !== undefined)
    throw new AuthorityError("PERMISSION_DENIED", `${approver}: ${problem}`);
  const now = ctx.now();
  const token = randomBytes(32).toString("base64url");
  const expiresAt = Math.min(now + settings.ttlSeconds, approval.expiresAt);
  await ctx.store.createApprovalLink({
    tokenHash: linkTokenHash(token),
    approvalId: approval.id,
    approver,
    createdAt: now,
    expiresAt,
  });
  return { url: approvalLinkUrl(base, token), expiresAt };
}

/** What a link's token opens: its approval to show, or why it cannot be used. */
export type OpenedLink =
  | { readonly kind: "open"; readonly link: ApprovalLink; readonly approval: Approval }
  | { readonly kind: "gone"; readonly why: "used" | "expired" }
  | { readonly kind: "unknown" };

/**
 * Reads a link without using it (the GET a mail scanner may make): its approval as its approver
 * sees it, or `gone` once used or expired. Decides nothing.
 */
export async function openApprovalLink(ctx: AuthorityContext, token: string): Promise<OpenedLink> {
  if (!TOKEN.test(token)) return { kind: "unknown" };
  const link = await ctx.store.getApprovalLink(linkTokenHash(token));
  if (link === undefined) return { kind: "unknown" };
  if (link.usedAt !== undefined) return { kind: "gone", why: "used" };
  if (link.expiresAt <= ctx.now()) return { kind: "gone", why: "expired" };
  const approval = await getApproval(ctx, link.approvalId, approverActor(link.approver));
  return { kind: "open", link, approval };
}

/**
 * Uses a link once: claims it atomically (of two racing uses one decides, the other is `gone`),
 * then decides as the link's approver through `decideApproval`, with the actor
 * `approverActor(approver)` — the approver comes from the stored link, never from the
 * request. The claim stands even when the decision is refused (the approval is no longer
 * pending): a link is used once, whatever its answer.
 */
export async function redeemApprovalLink(
  ctx: AuthorityContext,
  token: string,
  answer: { readonly outcome: "approve" | "reject"; readonly note: string },
): Promise<
  { readonly kind: "decided"; readonly approval: Approval } | Exclude<OpenedLink, { kind: "open" }>
> {
  if (!TOKEN.test(token)) return { kind: "unknown" };
  if (answer.note.length > 1000) throw invalidRequest("note", "must be at most 1000 characters");
  const claimed = await ctx.store.redeemApprovalLink(linkTokenHash(token), ctx.now());
  if (!claimed.ok)
    return claimed.problem === "unknown"
      ? { kind: "unknown" }
      : { kind: "gone", why: claimed.problem };
  const { approver, approvalId } = claimed.link;
  const approval = await decideApproval(
    ctx,
    { approvalId, outcome: answer.outcome, decidedBy: approver, note: answer.note },
    approverActor(approver),
  );
  return { kind: "decided", approval };
}
