import type { Effect } from "../core/catalog.js";
import type { GrantMode } from "../core/policy.js";
import type { ToolStatus } from "../core/project.js";
import type { Decision } from "../core/verdict.js";
import type { DialectName } from "./dialects.js";
import {
  Decision as PbDecision,
  Dialect as PbDialect,
  Effect as PbEffect,
  GrantMode as PbGrantMode,
  ToolStatus as PbToolStatus,
} from "../gen/charter/v1/common_pb.js";

// Exhaustive maps: a new domain value that is not mapped fails compilation.

export const DECISION_TO_PROTO: Readonly<Record<Decision, PbDecision>> = {
  allow: PbDecision.ALLOW,
  deny: PbDecision.DENY,
  require_approval: PbDecision.REQUIRE_APPROVAL,
  effect_suppressed: PbDecision.EFFECT_SUPPRESSED,
};

/** The verdict decision a proto value stands for; undefined for UNSPECIFIED or an unknown value. */
export function decisionFromProto(decision: PbDecision): Decision | undefined {
  return (Object.keys(DECISION_TO_PROTO) as Decision[]).find((d) => DECISION_TO_PROTO[d] === decision);
}

export const DIALECT_TO_PROTO: Readonly<Record<DialectName, PbDialect>> = {
  neutral: PbDialect.NEUTRAL,
  openai_chat: PbDialect.OPENAI_CHAT,
  openai_responses: PbDialect.OPENAI_RESPONSES,
  anthropic: PbDialect.ANTHROPIC,
  mcp: PbDialect.MCP,
  gemini: PbDialect.GEMINI,
};

/** The dialect a proto value asks for: UNSPECIFIED means neutral; an unknown value answers undefined. */
export function dialectFromProto(dialect: PbDialect): DialectName | undefined {
  if (dialect === PbDialect.UNSPECIFIED) return "neutral";
  return (Object.keys(DIALECT_TO_PROTO) as DialectName[]).find((d) => DIALECT_TO_PROTO[d] === dialect);
}

export const EFFECT_TO_PROTO: Readonly<Record<Effect, PbEffect>> = {
  read: PbEffect.READ,
  write: PbEffect.WRITE,
  external: PbEffect.EXTERNAL,
  destructive: PbEffect.DESTRUCTIVE,
};

export const TOOL_STATUS_TO_PROTO: Readonly<Record<ToolStatus, PbToolStatus>> = {
  callable: PbToolStatus.CALLABLE,
  requires_approval: PbToolStatus.REQUIRES_APPROVAL,
};

export const MODE_TO_PROTO: Readonly<Record<GrantMode, PbGrantMode>> = {
  live: PbGrantMode.LIVE,
  shadow: PbGrantMode.SHADOW,
};

/** A proto mode; UNSPECIFIED means "not asked" and answers undefined. */
export function modeFromProto(mode: PbGrantMode): GrantMode | undefined {
  switch (mode) {
    case PbGrantMode.LIVE:
      return "live";
    case PbGrantMode.SHADOW:
      return "shadow";
    case PbGrantMode.UNSPECIFIED:
      return undefined;
  }
}
