import type { CharterConfig } from "../config/config.js";
import type { RequestLimits } from "../server/request-limits.js";

/** The transport's request limits from the configuration. */
export function requestLimits(config: CharterConfig): RequestLimits {
  return {
    fieldLength: config.maxFieldLength,
    textLength: config.maxTextLength,
    tokenBytes: config.maxTokenBytes,
    argumentsBytes: config.maxArgumentsBytes,
    listItems: config.maxListItems,
    batch: config.maxBatch,
  };
}
