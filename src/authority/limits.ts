import { DEFAULT_ARGUMENT_LIMITS } from "../core/call-request.js";
import type { JsonLimits } from "../core/strict-json.js";

/** The hard limits the application layer applies itself (the transport applies field lengths). */
export interface AuthorityLimits {
  /** A call's `arguments_json`: UTF-8 bytes and nesting depth. */
  readonly arguments: JsonLimits;
  /** The largest grant token issued (a larger one is refused before anything is recorded). */
  readonly maxTokenBytes: number;
}

export const DEFAULT_AUTHORITY_LIMITS: AuthorityLimits = {
  arguments: DEFAULT_ARGUMENT_LIMITS,
  maxTokenBytes: 64 * 1024,
};
