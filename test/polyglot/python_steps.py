#!/usr/bin/env python3
"""Targets and steps from Python, through stubs generated from proto/charter/v1.

Against the demo policy: a tool call with a step asked twice (a retry after a timeout) answers
the same decision id and receipt; the same step with other arguments is STEP_CONFLICT; a graph
operation of a kind the server does not know (enum value 42) is UNKNOWN_TARGET_KIND.
Prints "python steps: ok" and exits 0, or prints "python steps: FAILED: <why>" and exits 1.
"""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--address", required=True)
    parser.add_argument("--stubs", required=True)
    args = parser.parse_args(argv)
    sys.path.insert(0, args.stubs)
    import grpc
    from charter.v1 import authority_pb2, authority_pb2_grpc, common_pb2, grant_pb2, grant_pb2_grpc

    channel = grpc.insecure_channel(args.address)
    grants = grant_pb2_grpc.GrantServiceStub(channel)
    authority = authority_pb2_grpc.AuthorityServiceStub(channel)
    issued = grants.IssueGrant(grant_pb2.IssueGrantRequest(profile="owner-assistant", subject="agent:py-steps", owner="ana@example.com", purpose="steps"), timeout=10)

    def ask(arguments: str, step: common_pb2.Step, target: common_pb2.Target | None = None) -> common_pb2.Verdict:
        call = common_pb2.ToolCall(call_id="py-1", tool_name="issue_refund", arguments_json=arguments, step=step)
        if target is not None:
            call.target.CopyFrom(target)
        return authority.Authorize(authority_pb2.AuthorizeRequest(grant_token=issued.grant_token, call=call), timeout=10).verdict

    refund = '{"order_id":"ord_A1B2C3","amount":40,"currency":"EUR","reason":"damaged"}'
    step = common_pb2.Step(run_id="py-run", tool_call_id="tc-1")
    first = ask(refund, step)
    again = ask(refund, step)
    if first.decision != common_pb2.DECISION_ALLOW or not first.receipt:
        return failed(f"expected an allow with a receipt, got {first}")
    if (again.decision_id, again.receipt) != (first.decision_id, first.receipt):
        return failed("the retried step was decided again")
    print(f"retry: same decision {first.decision_id}")
    changed = ask(refund.replace("40", "41"), step)
    if changed.reason.code != "STEP_CONFLICT":
        return failed(f"expected STEP_CONFLICT, got {changed.reason.code}")
    print("changed arguments: STEP_CONFLICT")
    newer = common_pb2.Target(graph_operation=common_pb2.GraphOperation(node_name="n", operation_definition_id="refund.issue", operation_kind=42))
    unknown = ask(refund, common_pb2.Step(run_id="py-run", activation=common_pb2.ActivationAttempt(activation_id="a", attempt=1)), newer)
    if unknown.decision != common_pb2.DECISION_DENY or unknown.reason.code != "UNKNOWN_TARGET_KIND":
        return failed(f"expected UNKNOWN_TARGET_KIND, got {unknown.reason.code}")
    print("operation kind 42: UNKNOWN_TARGET_KIND")
    print("python steps: ok")
    return 0


def failed(why: str) -> int:
    print(f"python steps: FAILED: {why}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
