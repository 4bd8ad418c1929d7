import type { Verdict } from "../core/verdict.js";
import type { CommitRefusalCode } from "../store/port.js";

/** What the model is told when the commit refused an allow. */
const REFUSAL_MESSAGES: Readonly<Record<CommitRefusalCode, (v: Verdict) => string>> = {
  LIMIT_EXCEEDED: () =>
    "This task has used all the calls its budget allows for this. Stop making such calls and report back.",
  APPROVAL_CONSUMED: (v) =>
    `The approval for this call to ${JSON.stringify(v.toolName || v.actionId)} was already used; request a new one.`,
  APPROVAL_EXPIRED: (v) =>
    `The approval for this call to ${JSON.stringify(v.toolName || v.actionId)} has expired; request a new one.`,
};

/** An allow the commit refused, as the deny it became (also what a retry of its step reads back). */
export function refusedVerdict(verdict: Verdict, code: CommitRefusalCode): Verdict {
  return {
    ...verdict,
    decision: "deny",
    reason: { code, message: REFUSAL_MESSAGES[code](verdict) },
  };
}
