import { create, toBinary } from "@bufbuild/protobuf";
import { anyPack } from "@bufbuild/protobuf/wkt";
import { BadRequestSchema, ErrorInfoSchema } from "../gen/google/rpc/error_details_pb.js";
import { StatusSchema } from "../gen/google/rpc/status_pb.js";
import type { GrpcStatus } from "./rpc-error.js";

/** The standard trailer carrying a serialized `google.rpc.Status`. */
export const STATUS_DETAILS_KEY = "grpc-status-details-bin";

/**
 * The `google.rpc.Status` of a status with machine-readable parts (ErrorInfo, BadRequest), or
 * undefined when it has none, so plain statuses carry no extra trailer.
 */
export function statusDetailsBin(s: GrpcStatus): Buffer | undefined {
  const details = [];
  if (s.info)
    details.push(
      anyPack(
        ErrorInfoSchema,
        create(ErrorInfoSchema, {
          reason: s.info.reason,
          domain: s.info.domain,
          metadata: { ...s.info.metadata },
        }),
      ),
    );
  if (s.fieldViolations && s.fieldViolations.length > 0) {
    details.push(
      anyPack(
        BadRequestSchema,
        create(BadRequestSchema, {
          fieldViolations: s.fieldViolations.map((v) => ({
            field: v.field,
            description: v.description,
          })),
        }),
      ),
    );
  }
  if (details.length === 0) return undefined;
  return Buffer.from(
    toBinary(StatusSchema, create(StatusSchema, { code: s.code, message: s.details, details })),
  );
}
