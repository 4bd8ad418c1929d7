import { create } from "@bufbuild/protobuf";
import type { ComposeRequest } from "../core/compose.js";
import { GrantMode } from "../gen/charter/v1/common_pb.js";
import { IssueGrantRequestSchema, type IssueGrantRequest } from "../gen/charter/v1/grant_pb.js";
import { DecodeError } from "./decode-error.js";
import { MODE_TO_PROTO, modeFromProto } from "./enums.js";

/**
 * An IssueGrant request as the domain's compose request. The lifetime keeps its sign and order
 * (a huge int64 stays huge), so the application layer's range check sees what was asked.
 */
export function issueRequestFromProto(req: IssueGrantRequest): ComposeRequest {
  const mode = modeFromProto(req.mode);
  if (mode === undefined && req.mode !== GrantMode.UNSPECIFIED)
    throw new DecodeError("mode", `unknown value ${String(req.mode)}`);
  return {
    profile: req.profile,
    subject: req.subject,
    owner: req.owner,
    purpose: req.purpose,
    requestedActions: [...req.requestedActions],
    ...(req.ttlSeconds === undefined ? {} : { ttlSeconds: Number(req.ttlSeconds) }),
    ...(mode === undefined ? {} : { mode }),
  };
}

/** A domain compose request as an IssueGrant request message. */
export function issueRequestToProto(req: ComposeRequest): IssueGrantRequest {
  return create(IssueGrantRequestSchema, {
    profile: req.profile,
    subject: req.subject,
    owner: req.owner,
    purpose: req.purpose,
    requestedActions: [...(req.requestedActions ?? [])],
    ...(req.ttlSeconds === undefined ? {} : { ttlSeconds: BigInt(req.ttlSeconds) }),
    ...(req.mode === undefined ? {} : { mode: MODE_TO_PROTO[req.mode] }),
  });
}
