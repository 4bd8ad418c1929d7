import type { Effect } from "../core/catalog.js";
import type { GrantMode } from "../core/policy.js";
import type { ToolStatus } from "../core/project.js";
import type { Decision } from "../core/verdict.js";
import type { DialectName } from "./dialects/index.js";
import {
  Decision as PbDecision,
  Dialect as PbDialect,
  Effect as PbEffect,
  GrantMode as PbGrantMode,
  ToolStatus as PbToolStatus,
} from "../gen/charter/v1/common_pb.js";

// One convention for every enum: an exhaustive `X_TO_PROTO` table (a new domain value that is not
// mapped fails compilation) and `xFromProto`, derived from it, answering undefined for a value
// the table does not map (UNSPECIFIED, or a number this version does not know).

/** The inverse of an exhaustive domain -> proto table. */
function fromProtoOf<D extends string, P extends number>(
  table: Readonly<Record<D, P>>,
): (value: P) => D | undefined {
  const inverse = new Map<number, D>((Object.entries(table) as [D, P][]).map(([d, p]) => [p, d]));
  return (value) => inverse.get(value);
}

export const DECISION_TO_PROTO: Readonly<Record<Decision, PbDecision>> = {
  allow: PbDecision.ALLOW,
  deny: PbDecision.DENY,
  require_approval: PbDecision.REQUIRE_APPROVAL,
  effect_suppressed: PbDecision.EFFECT_SUPPRESSED,
};

/** The verdict decision a proto value stands for; undefined for UNSPECIFIED or an unknown value. */
export const decisionFromProto = fromProtoOf(DECISION_TO_PROTO);

export const DIALECT_TO_PROTO: Readonly<Record<DialectName, PbDialect>> = {
  neutral: PbDialect.NEUTRAL,
  openai_chat: PbDialect.OPENAI_CHAT,
  openai_responses: PbDialect.OPENAI_RESPONSES,
  anthropic: PbDialect.ANTHROPIC,
  mcp: PbDialect.MCP,
  gemini: PbDialect.GEMINI,
  langchain: PbDialect.LANGCHAIN,
  pydantic_ai: PbDialect.PYDANTIC_AI,
};

/** The dialect a proto value asks for: UNSPECIFIED means neutral; an unknown value answers undefined. */
export function dialectFromProto(dialect: PbDialect): DialectName | undefined {
  return dialect === PbDialect.UNSPECIFIED ? "neutral" : dialectOf(dialect);
}

const dialectOf = fromProtoOf(DIALECT_TO_PROTO);

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
export const modeFromProto = fromProtoOf(MODE_TO_PROTO);
