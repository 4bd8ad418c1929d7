import {
  parseCallArguments,
  type CallRequest,
  type ParsedArguments,
} from "../core/call-request.js";
import { callDigests, type CallDigests } from "../core/digest.js";
import type { AuthorityContext } from "./context.js";
import type { AuthorityLimits } from "./limits.js";
import { nativeSha256Hex } from "./sha256.js";
import { stepAsk, type StepAsk } from "./steps.js";

/**
 * One call as it enters the pipeline, made once by `admitCall` whichever door it came through:
 * the request as sent, its arguments parsed strictly once (the value that is checked, digested
 * and signed), the digests of that value's canonical text (made on first use, shared by the
 * decision record, the approval and the receipt), where it sits in its run, and the id its
 * decision is recorded under. Nothing downstream parses or serializes the arguments again.
 */
export interface AdmittedCall {
  readonly request: CallRequest;
  /** The arguments, strictly parsed; or why the text is refused (the call is then an INVALID_ARGUMENTS deny). */
  readonly args: ParsedArguments;
  /** The digests of `args`' value (undefined when the text was refused). */
  readonly digests: CallDigests | undefined;
  /** Where the call is held in its run: undefined for a call without a step. */
  readonly ask: StepAsk | undefined;
  /** Whether the call presents an approval (a retry of a call that required one). */
  readonly presentsApproval: boolean;
  readonly decisionId: string;
}

/** The one value a call becomes when it enters (`AdmittedCall`). */
export function admitCall(
  ctx: Pick<AuthorityContext, "newId">,
  request: CallRequest,
  limits: AuthorityLimits,
): AdmittedCall {
  const args = parseCallArguments(request.argumentsJson, limits.arguments);
  return {
    request,
    args,
    digests: args.ok ? callDigests(args.value, nativeSha256Hex) : undefined,
    ask: stepAsk(request, args),
    presentsApproval: (request.approvalId ?? "") !== "",
    decisionId: ctx.newId("dec"),
  };
}
