import { create, toJson } from "@bufbuild/protobuf";
import { endorseApproval, listEndorsements, revokeEndorsement } from "../../authority/index.js";
import {
  EndorsementSchema,
  ListEndorsementsResponseSchema,
  type Endorsement as PbEndorsement,
  type ListEndorsementsResponse,
} from "../../gen/charter/v1/approval_pb.js";
import { displayEndorsement, endorsementToProto } from "../../interop/endorsement-codec.js";
import type { CliIo } from "../io.js";
import { UsageError, intFlag } from "../options.js";
import type { Target } from "../target.js";

/** The flags the endorsement verbs read. */
interface EndorsementFlags {
  readonly owner?: string | undefined;
  readonly by?: string | undefined;
  readonly bounds?: string | undefined;
  readonly calls?: string | undefined;
  readonly minutes?: string | undefined;
  readonly active?: boolean | undefined;
  readonly "page-size"?: string | undefined;
  readonly "page-token"?: string | undefined;
}

/**
 * `charter approvals endorse | endorsements | revoke-endorsement`: scoped endorsements through a
 * running server (`--server`) or offline on the data dir, printing the same JSON either way,
 * every text escaped as approvals are.
 */
export async function endorsementVerb(
  verb: "endorse" | "endorsements" | "revoke-endorsement",
  id: string | undefined,
  values: EndorsementFlags,
  io: CliIo,
  run: (fn: (target: Target) => Promise<number>) => Promise<number>,
): Promise<number> {
  const print = (e: PbEndorsement) => {
    io.out(JSON.stringify(toJson(EndorsementSchema, displayEndorsement(e)), null, 2));
    return 0;
  };
  switch (verb) {
    case "endorse": {
      const approvalId = required(id, "the approval id");
      if (values.bounds === undefined) throw new UsageError("--bounds JSON is required");
      const maxCalls = intFlag(values.calls, "--calls");
      const minutes = intFlag(values.minutes, "--minutes");
      if (maxCalls === undefined) throw new UsageError("--calls K is required");
      if (minutes === undefined) throw new UsageError("--minutes T is required");
      const req = {
        approvalId,
        boundsJson: values.bounds,
        maxCalls,
        ttlSeconds: minutes * 60,
        endorsedBy: values.by ?? "",
      };
      return run(async (t) => {
        if (t.kind === "server") {
          const { endorsement } = await t.clients.approvals.endorseApproval({
            ...req,
            ttlSeconds: BigInt(req.ttlSeconds),
          });
          return print(orThrow(endorsement));
        }
        return print(endorsementToProto(await endorseApproval(t.ctx, req)));
      });
    }
    case "endorsements": {
      const req = {
        owner: values.owner ?? "",
        activeOnly: values.active === true,
        pageSize: intFlag(values["page-size"], "--page-size") ?? 0,
        pageToken: values["page-token"] ?? "",
      };
      return run(async (t) => {
        const page = await listOn(t, req);
        io.out(JSON.stringify(toJson(ListEndorsementsResponseSchema, page), null, 2));
        return 0;
      });
    }
    case "revoke-endorsement": {
      const req = {
        endorsementId: required(id, "the endorsement id"),
        revokedBy: values.by ?? "",
      };
      return run(async (t) => {
        if (t.kind === "server")
          return print(orThrow((await t.clients.approvals.revokeEndorsement(req)).endorsement));
        return print(endorsementToProto(await revokeEndorsement(t.ctx, req)));
      });
    }
  }
}

async function listOn(
  t: Target,
  req: { owner: string; activeOnly: boolean; pageSize: number; pageToken: string },
): Promise<ListEndorsementsResponse> {
  if (t.kind === "server") {
    const page = await t.clients.approvals.listEndorsements(req);
    return { ...page, endorsements: page.endorsements.map(displayEndorsement) };
  }
  const page = await listEndorsements(t.ctx, req);
  return create(ListEndorsementsResponseSchema, {
    endorsements: page.endorsements.map(endorsementToProto),
    nextPageToken: page.nextPageToken,
  });
}

function required(id: string | undefined, what: string): string {
  if (id === undefined || id === "") throw new UsageError(`${what} is required`);
  return id;
}

function orThrow(e: PbEndorsement | undefined): PbEndorsement {
  if (!e) throw new Error("the server answered no endorsement");
  return e;
}
