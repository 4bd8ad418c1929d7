import { create, toJson, toJsonString } from "@bufbuild/protobuf";
import {
  APPROVAL_STATUSES,
  createApprovalLink,
  decideApproval,
  getApproval,
  listApprovals,
  watchApprovals,
  type ApprovalStatus,
} from "../../authority/index.js";
import {
  ApprovalOutcome,
  ListApprovalsResponseSchema,
  WatchApprovalsResponseSchema,
  type ListApprovalsResponse,
  type WatchApprovalsResponse,
} from "../../gen/charter/v1/approval_pb.js";
import {
  ApprovalSchema,
  ApprovalStatus as PbApprovalStatus,
  type Approval as PbApproval,
} from "../../gen/charter/v1/common_pb.js";
import {
  APPROVAL_STATUS_TO_PROTO,
  approvalEventToProto,
  approvalToProto,
  displayApproval,
} from "../../interop/approval-codec.js";
import type { CliIo } from "../io.js";
import { endorsementVerb } from "./endorsements.js";
import { CONFIG_FLAGS, UsageError, configFrom, intFlag, parse } from "../options.js";
import { SERVER_FLAGS, serverAddress, withTarget, type Target } from "../target.js";

const FLAGS = {
  ...CONFIG_FLAGS,
  ...SERVER_FLAGS,
  owner: { type: "string" },
  status: { type: "string" },
  "page-size": { type: "string" },
  "page-token": { type: "string" },
  by: { type: "string" },
  approver: { type: "string" },
  note: { type: "string" },
  after: { type: "string" },
  count: { type: "string" },
  bounds: { type: "string" },
  calls: { type: "string" },
  minutes: { type: "string" },
  active: { type: "boolean" },
} as const;

/**
 * `charter approvals`: an owner's approvals on the command line — through a running server's
 * ApprovalService (`--server`) or offline through the same application functions on the data
 * dir; the output (JSON of the proto messages; `watch`: one line per event) is the same, every
 * text in an approval with control, bidi and invisible characters shown as escapes.
 */
export async function approvalsCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(args, FLAGS, true);
  const [verb, id, ...extra] = positionals;
  if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0] ?? ""}"`);
  const run = (fn: (target: Target) => Promise<number>) =>
    withTarget(
      serverAddress(values.server, io, values["api-key"]),
      () => configFrom(values, io.env),
      io,
      fn,
    );
  switch (verb) {
    case "list": {
      const owner = values.owner ?? "";
      const status = statusFlag(values.status);
      const pageSize = intFlag(values["page-size"], "--page-size") ?? 0;
      const pageToken = values["page-token"] ?? "";
      return run(async (t) => {
        const page = await listOn(t, owner, status, pageSize, pageToken);
        io.out(JSON.stringify(toJson(ListApprovalsResponseSchema, page), null, 2));
        return 0;
      });
    }
    case "show":
      return run(async (t) => {
        io.out(JSON.stringify(toJson(ApprovalSchema, await showOn(t, required(id))), null, 2));
        return 0;
      });
    case "approve":
    case "reject": {
      const approvalId = required(id);
      if (values.by === undefined || values.by === "") throw new UsageError("--by WHO is required");
      const outcome = verb === "approve" ? "approve" : "reject";
      const req = { approvalId, outcome, decidedBy: values.by, note: values.note ?? "" } as const;
      return run(async (t) => {
        io.out(JSON.stringify(toJson(ApprovalSchema, await decideOn(t, req)), null, 2));
        return 0;
      });
    }
    case "link": {
      const approvalId = required(id);
      const approver = values.approver ?? "";
      if (approver.trim() === "") throw new UsageError("--approver PRINCIPAL is required");
      return run(async (t) => {
        io.out(await linkOn(t, { approvalId, approver }));
        return 0;
      });
    }
    case "watch": {
      const owner = values.owner ?? "";
      const after = intFlag(values.after, "--after");
      const count = intFlag(values.count, "--count");
      return run(async (t) => {
        const stop = new AbortController();
        const onSignal = () => stop.abort();
        process.once("SIGINT", onSignal);
        process.once("SIGTERM", onSignal);
        let seen = 0;
        try {
          for await (const event of watchOn(t, owner, after, stop.signal)) {
            io.out(toJsonString(WatchApprovalsResponseSchema, event));
            if (count !== undefined && ++seen >= count) break;
          }
        } finally {
          process.off("SIGINT", onSignal);
          process.off("SIGTERM", onSignal);
        }
        return 0;
      });
    }
    case "endorse":
    case "endorsements":
    case "revoke-endorsement":
      return endorsementVerb(verb, id, values, io, run);
    default:
      throw new UsageError(
        verb === undefined
          ? "approvals needs a subcommand"
          : `unknown approvals subcommand "${verb}"`,
      );
  }
}

function required(id: string | undefined): string {
  if (id === undefined || id === "") throw new UsageError("the approval id is required");
  return id;
}

function statusFlag(value: string | undefined): ApprovalStatus | undefined {
  if (value === undefined) return undefined;
  if (!(APPROVAL_STATUSES as readonly string[]).includes(value))
    throw new UsageError(`--status must be one of ${APPROVAL_STATUSES.join(", ")}`);
  return value as ApprovalStatus;
}

async function listOn(
  t: Target,
  owner: string,
  status: ApprovalStatus | undefined,
  pageSize: number,
  pageToken: string,
): Promise<ListApprovalsResponse> {
  if (t.kind === "server") {
    const page = await t.clients.approvals.listApprovals({
      owner,
      status: status ? APPROVAL_STATUS_TO_PROTO[status] : PbApprovalStatus.UNSPECIFIED,
      pageSize,
      pageToken,
    });
    return { ...page, approvals: page.approvals.map(displayApproval) };
  }
  const page = await listApprovals(t.ctx, {
    owner,
    pageSize,
    pageToken,
    ...(status ? { status } : {}),
  });
  return create(ListApprovalsResponseSchema, {
    approvals: page.approvals.map(approvalToProto),
    nextPageToken: page.nextPageToken,
  });
}

async function showOn(t: Target, approvalId: string): Promise<PbApproval> {
  if (t.kind === "server")
    return orThrow((await t.clients.approvals.getApproval({ approvalId })).approval);
  return approvalToProto(await getApproval(t.ctx, approvalId));
}

async function decideOn(
  t: Target,
  req: { approvalId: string; outcome: "approve" | "reject"; decidedBy: string; note: string },
): Promise<PbApproval> {
  if (t.kind === "server") {
    const outcome = req.outcome === "approve" ? ApprovalOutcome.APPROVE : ApprovalOutcome.REJECT;
    return orThrow(
      (
        await t.clients.approvals.decideApproval({
          approvalId: req.approvalId,
          outcome,
          decidedBy: req.decidedBy,
          note: req.note,
        })
      ).approval,
    );
  }
  return approvalToProto(await decideApproval(t.ctx, req));
}

/** The link's URL: from the server, or made offline on the data dir. */
async function linkOn(
  t: Target,
  req: { readonly approvalId: string; readonly approver: string },
): Promise<string> {
  if (t.kind === "server") return (await t.clients.approvals.createApprovalLink(req)).url;
  return (await createApprovalLink(t.ctx, req)).url;
}

async function* watchOn(
  t: Target,
  owner: string,
  after: number | undefined,
  signal: AbortSignal,
): AsyncGenerator<WatchApprovalsResponse> {
  if (t.kind === "server") {
    for await (const event of t.clients.approvals.watchApprovals(
      { owner, ...(after === undefined ? {} : { afterSequence: BigInt(after) }) },
      { signal },
    ))
      yield event.approval ? { ...event, approval: displayApproval(event.approval) } : event;
    return;
  }
  for await (const event of watchApprovals(
    t.ctx,
    { owner, ...(after === undefined ? {} : { afterSequence: after }) },
    { signal },
  ))
    yield approvalEventToProto(event);
}

/** A server's answer, shown as this CLI shows its own (escaped again: a server may be older). */
function orThrow(approval: PbApproval | undefined): PbApproval {
  if (!approval) throw new Error("the server answered no approval");
  return displayApproval(approval);
}
