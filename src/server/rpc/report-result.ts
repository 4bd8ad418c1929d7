import { reportResult as report, type AuthorityContext } from "../../authority/index.js";
import { ResultOutcome, type AuthorityService } from "../../gen/charter/v1/authority_pb.js";
import { DecodeError } from "../../interop/decode-error.js";
import { callerOf } from "../call-context.js";
import type { ServiceHandlers } from "../router.js";

/** ReportResult: an allowed call's result, reported by the door that saw it. */
export function reportResult(
  ctx: AuthorityContext,
): ServiceHandlers<typeof AuthorityService>["reportResult"] {
  return async (req, call) => {
    if (req.outcome !== ResultOutcome.SUCCEEDED && req.outcome !== ResultOutcome.FAILED)
      throw new DecodeError("outcome", "must be RESULT_OUTCOME_SUCCEEDED or RESULT_OUTCOME_FAILED");
    const outcome = await report(
      ctx,
      {
        grantToken: req.grantToken,
        runId: req.runId,
        decisionId: req.decisionId,
        failed: req.outcome === ResultOutcome.FAILED,
        labels: [...req.labels],
        resultJson: req.resultJson,
      },
      callerOf(call),
    );
    return {
      addedLabels: [...outcome.added],
      released: outcome.released,
      narrowedLabels: [...(outcome.narrowed ?? [])],
    };
  };
}
