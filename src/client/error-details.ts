import { fromBinary } from "@bufbuild/protobuf";
import { anyUnpack, type Any } from "@bufbuild/protobuf/wkt";
import type { ServiceError } from "@grpc/grpc-js";
import { BadRequestSchema, ErrorInfoSchema } from "../gen/google/rpc/error_details_pb.js";
import { StatusSchema } from "../gen/google/rpc/status_pb.js";

/** The machine-readable parts of a failed call, read from its `grpc-status-details-bin` trailer. */
export interface ErrorDetails {
  /** Charter's code for the error (`google.rpc.ErrorInfo.reason`), e.g. `GRANT_REVOKED`. */
  readonly reason?: string;
  /** Who defines the reason; `"charter"` for Charter's codes. */
  readonly domain?: string;
  readonly metadata: Readonly<Record<string, string>>;
  /** The wrong request fields (`google.rpc.BadRequest`), e.g. `{ field: "profile", description: "is required" }`. */
  readonly fieldViolations: readonly { readonly field: string; readonly description: string }[];
}

const TRAILER = "grpc-status-details-bin";

/**
 * Decodes the standard status details of a failed call. A call without them (or with details of
 * other types) gives an empty result; a trailer that does not decode is ignored.
 */
export function errorDetails(err: Pick<ServiceError, "metadata">): ErrorDetails {
  let reason: string | undefined;
  let domain: string | undefined;
  let metadata: Record<string, string> = {};
  const fieldViolations: { field: string; description: string }[] = [];
  const bin = err.metadata.get(TRAILER)[0];
  if (bin instanceof Uint8Array) {
    let details: Any[] = [];
    try {
      details = fromBinary(StatusSchema, bin).details;
    } catch {
      // Not a google.rpc.Status: no details.
    }
    for (const any of details) {
      const info = anyUnpack(any, ErrorInfoSchema);
      if (info) {
        reason = info.reason;
        domain = info.domain;
        metadata = { ...info.metadata };
      }
      const bad = anyUnpack(any, BadRequestSchema);
      if (bad)
        for (const v of bad.fieldViolations)
          fieldViolations.push({ field: v.field, description: v.description });
    }
  }
  return {
    ...(reason === undefined ? {} : { reason }),
    ...(domain === undefined ? {} : { domain }),
    metadata,
    fieldViolations,
  };
}
