/**
 * The framework-neutral half of the framework recipes: one gate per task (one grant token) that
 * asks Charter about each exact tool call before the framework decides anything, waits for
 * Charter's decision on a held call, and runs a tool's effect only on a fresh DECISION_ALLOW.
 *
 * The one idea: a framework's "approve" is never the decision. The gate resolves the framework's
 * approval step from Charter's approval status, and the tool re-authorizes with the approval id
 * right before its effect, so an approval Charter did not give (or gave once, and was used) runs
 * nothing.
 */
import type { PromiseClient } from "../../src/client/index.js";
import type { ApprovalService } from "../../src/gen/charter/v1/approval_pb.js";
import type { AuthorityService } from "../../src/gen/charter/v1/authority_pb.js";
import { ApprovalStatus, Decision, type Approval } from "../../src/gen/charter/v1/common_pb.js";

/** One tool call as the model produced it: the framework's call id, the tool and its arguments. */
export interface GateCall {
  readonly callId: string;
  readonly toolName: string;
  readonly args: unknown;
}

/** What Charter said about a call before it runs. */
export type Precheck =
  | { readonly kind: "allow"; readonly receipt: string }
  | { readonly kind: "deny"; readonly code: string; readonly message: string }
  | { readonly kind: "held"; readonly approvalId: string; readonly requirement: string };

/** Charter's answer to a held call: approved, refused for good, or still pending at the bound. */
export type ApprovalAnswer =
  | { readonly kind: "approved"; readonly approval: Approval }
  | { readonly kind: "refused"; readonly approval: Approval; readonly message: string }
  | { readonly kind: "pending"; readonly approvalId: string };

/** What running a governed tool came to: its effect's value and receipt, or why nothing ran. */
export type GateOutcome<T> =
  | { readonly ran: true; readonly value: T; readonly receipt: string }
  | { readonly ran: false; readonly code: string; readonly message: string };

export interface CharterGateOptions {
  readonly authority: PromiseClient<typeof AuthorityService>;
  readonly approvals: PromiseClient<typeof ApprovalService>;
  /** The task's grant token. */
  readonly grantToken: string;
  /** Deadline of each Charter call; 5 s by default. */
  readonly timeoutMs?: number;
}

export interface WaitOptions {
  /** How long to wait for a decision before answering `pending`; 60 s by default. */
  readonly timeoutMs?: number;
  /** How often GetApproval is asked; 200 ms by default. */
  readonly pollMs?: number;
  readonly signal?: AbortSignal;
}

export interface CharterGate {
  /**
   * Authorizes the exact call and remembers the answer under its call id. A call already held is
   * answered from memory, not asked again: an allow is the permission to run (an approved call
   * asked again is allowed, and its approval used), so Charter is asked only right before the
   * effect (`run`) once a call is held.
   */
  precheck(call: GateCall): Promise<Precheck>;
  /** The Charter approval holding a call, when its precheck was held. */
  heldApproval(callId: string): string | undefined;
  /** Waits (GetApproval, bounded) until Charter has decided the approval. */
  awaitDecision(approvalId: string, options?: WaitOptions): Promise<ApprovalAnswer>;
  /**
   * Runs `effect` only if Charter allows the call now: an allow from the precheck is used once;
   * a held call is authorized again with its approval id; a call never prechecked is authorized
   * here. Otherwise nothing runs and the outcome carries Charter's reason for the model.
   */
  run<T>(call: GateCall, effect: (receipt: string) => Promise<T>): Promise<GateOutcome<T>>;
  /** Forgets a call whose approval step ended without running it. */
  forget(callId: string): void;
}

const HELD_MESSAGE = "This call is held for the owner's approval in Charter; it did not run.";

/** Creates the gate for one task's grant. */
export function createCharterGate(options: CharterGateOptions): CharterGate {
  const { authority, approvals, grantToken } = options;
  const deadline = { timeoutMs: options.timeoutMs ?? 5_000 };
  const prechecks = new Map<string, Precheck>();

  async function authorize(call: GateCall, approvalId?: string): Promise<Precheck> {
    const { verdict } = await authority.authorize(
      {
        grantToken,
        call: {
          callId: call.callId,
          toolName: call.toolName,
          argumentsJson: JSON.stringify(call.args ?? {}),
        },
        ...(approvalId === undefined ? {} : { approvalId }),
      },
      deadline,
    );
    switch (verdict?.decision) {
      case Decision.ALLOW:
        return { kind: "allow", receipt: verdict.receipt };
      case Decision.REQUIRE_APPROVAL:
        return { kind: "held", approvalId: verdict.approvalId, requirement: verdict.requirement };
      case Decision.DENY:
      case Decision.EFFECT_SUPPRESSED:
        return {
          kind: "deny",
          code: verdict.reason?.code ?? "DENY",
          message: verdict.reason?.message ?? "Charter refused this call.",
        };
      default:
        // DECISION_UNSPECIFIED or a decision this recipe does not know: treat as a deny.
        return { kind: "deny", code: "UNSPECIFIED", message: "Charter did not allow this call." };
    }
  }

  return {
    async precheck(call) {
      // The AI SDK asks needsApproval again when it resumes an approved call: still held.
      const known = prechecks.get(call.callId);
      if (known?.kind === "held") return known;
      const answer = await authorize(call);
      prechecks.set(call.callId, answer);
      return answer;
    },

    heldApproval(callId) {
      const answer = prechecks.get(callId);
      return answer?.kind === "held" ? answer.approvalId : undefined;
    },

    async awaitDecision(approvalId, waitOptions = {}) {
      const until = Date.now() + (waitOptions.timeoutMs ?? 60_000);
      for (;;) {
        const { approval } = await approvals.getApproval({ approvalId }, deadline);
        if (approval === undefined) throw new Error(`GetApproval answered no approval`);
        const answer = answerOf(approval);
        if (answer !== undefined) return answer;
        if (Date.now() >= until || waitOptions.signal?.aborted)
          return { kind: "pending", approvalId };
        await sleep(waitOptions.pollMs ?? 200, waitOptions.signal);
      }
    },

    async run(call, effect) {
      const before = prechecks.get(call.callId);
      prechecks.delete(call.callId);
      // Authorize right before the effect, presenting the approval Charter holds for this call.
      const now =
        before?.kind === "allow" || before?.kind === "deny"
          ? before
          : await authorize(call, before?.approvalId);
      switch (now.kind) {
        case "allow":
          return { ran: true, value: await effect(now.receipt), receipt: now.receipt };
        case "deny":
          return { ran: false, code: now.code, message: now.message };
        case "held":
          return { ran: false, code: "HELD", message: HELD_MESSAGE };
      }
    },

    forget(callId) {
      prechecks.delete(callId);
    },
  };
}

/** Charter's decision on an approval, or undefined while it is pending. */
function answerOf(approval: Approval): ApprovalAnswer | undefined {
  switch (approval.status) {
    case ApprovalStatus.PENDING:
      return undefined;
    case ApprovalStatus.APPROVED:
      return { kind: "approved", approval };
    case ApprovalStatus.REJECTED:
      return refused(approval, `The owner rejected this call in Charter${noteOf(approval)}.`);
    case ApprovalStatus.EXPIRED:
      return refused(approval, "The approval for this call expired in Charter before a decision.");
    case ApprovalStatus.CONSUMED:
      return refused(approval, "The approval for this call was already used once.");
    case ApprovalStatus.SUPERSEDED:
      return refused(
        approval,
        `Charter no longer allows this call (${approval.statusReason?.code ?? "SUPERSEDED"}).`,
      );
    case ApprovalStatus.UNSPECIFIED:
      return refused(approval, "Charter did not approve this call.");
  }
}

function refused(approval: Approval, message: string): ApprovalAnswer {
  return { kind: "refused", approval, message };
}

function noteOf(approval: Approval): string {
  return approval.note === "" ? "" : `: ${approval.note}`;
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
  });
}
