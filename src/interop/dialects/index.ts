import type { JsonValue } from "../../core/json.js";
import type { CatalogView } from "../../core/project.js";
import { anthropic } from "./anthropic.js";
import { gemini } from "./gemini.js";
import { langchain } from "./langchain.js";
import { mcp } from "./mcp.js";
import { neutral } from "./neutral.js";
import { openaiChat } from "./openai-chat.js";
import { openaiResponses } from "./openai-responses.js";
import { pydanticAi } from "./pydantic-ai.js";
import type { DialectCodec, DialectName } from "./types.js";

/** Every dialect's codec; a dialect without one does not compile. */
export const DIALECTS: Readonly<Record<DialectName, DialectCodec>> = {
  neutral,
  openai_chat: openaiChat,
  openai_responses: openaiResponses,
  anthropic,
  mcp,
  gemini,
  langchain,
  pydantic_ai: pydanticAi,
};

/** Renders a view's tools for a framework; only what the view holds is rendered. */
export function renderTools(view: CatalogView, dialect: DialectName): JsonValue {
  return DIALECTS[dialect].renderTools(view);
}

export { toolsJson } from "./common.js";

export { DIALECT_NAMES } from "./types.js";
export type { DialectCodec, DialectName, ParsedTurn, TurnCall } from "./types.js";
export {
  MCP_INVALID_PARAMS,
  isMcpError,
  mcpAnnotations,
  mcpCallKey,
  mcpTool,
  mcpToolDigest,
} from "./mcp.js";
export type { McpFeedback, McpTool, McpToolList } from "./mcp.js";
