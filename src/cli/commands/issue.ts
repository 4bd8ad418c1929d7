import { toJson } from "@bufbuild/protobuf";
import { issueGrant } from "../../authority/index.js";
import type { IssueRequest } from "../../authority/index.js";
import { GrantSchema, type Grant } from "../../gen/charter/v1/common_pb.js";
import { grantToProto } from "../../interop/grant-codec.js";
import { issueRequestToProto } from "../../interop/issue-codec.js";
import type { CliIo } from "../io.js";
import { CONFIG_FLAGS, UsageError, configFrom, parse } from "../options.js";
import { SERVER_FLAGS, serverAddress, withTarget, type Target } from "../target.js";

/**
 * `charter issue`: composes a grant for a profile and prints its token — through a running
 * server's IssueGrant with --server, or offline on the data dir (the server's store and keys).
 * Both print the same output.
 */
export async function issueCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values } = parse(args, {
    ...CONFIG_FLAGS,
    profile: { type: "string" },
    subject: { type: "string" },
    owner: { type: "string" },
    purpose: { type: "string" },
    action: { type: "string", multiple: true },
    ttl: { type: "string" },
    shadow: { type: "boolean" },
    json: { type: "boolean" },
    ...SERVER_FLAGS,
  });
  if (!values.profile) throw new UsageError("--profile is required");
  const ttl = values.ttl === undefined ? undefined : Number(values.ttl);
  if (ttl !== undefined && !(Number.isSafeInteger(ttl) && ttl > 0))
    throw new UsageError("--ttl must be a positive number of seconds");
  const request: IssueRequest = {
    profile: values.profile,
    subject: values.subject ?? "agent:cli",
    owner: values.owner ?? "owner:cli",
    purpose: values.purpose ?? "",
    requestedActions: values.action ?? [],
    ...(ttl === undefined ? {} : { ttlSeconds: ttl }),
    ...(values.shadow ? { mode: "shadow" as const } : {}),
  };
  return withTarget(
    serverAddress(values.server, io, values["api-key"]),
    () => configFrom(values, io.env),
    io,
    async (target) => {
      const { grant, token } = await issueOn(target, request);
      io.out(
        values.json ? JSON.stringify({ grant: toJson(GrantSchema, grant), token }, null, 2) : token,
      );
      return 0;
    },
  );
}

/** Issues a grant on the target; answers it as its proto message and its token. */
export async function issueOn(
  target: Target,
  request: IssueRequest,
): Promise<{ grant: Grant; token: string }> {
  if (target.kind === "server") {
    const { grant, grantToken } = await target.clients.grants.issueGrant(
      issueRequestToProto(request),
    );
    if (!grant) throw new Error("the server answered no grant");
    return { grant, token: grantToken };
  }
  const issued = await issueGrant(target.ctx, request);
  return { grant: grantToProto(issued.grant), token: issued.token };
}
