import type Anthropic from "@anthropic-ai/sdk";
import type { Content, Part, Tool as GeminiSdkTool } from "@google/genai";
import {
  CallToolResultSchema,
  ListToolsResultSchema,
  type CallToolResult,
  type JSONRPCErrorResponse,
  type JSONRPCResultResponse,
  type ListToolsResult,
} from "@modelcontextprotocol/sdk/types.js";
import type {
  ChatCompletionFunctionTool,
  ChatCompletionToolMessageParam,
} from "openai/resources/chat/completions";
import type { FunctionTool, ResponseInputItem } from "openai/resources/responses/responses";
import { describe, expect, expectTypeOf, it } from "vitest";
import { isJsonObject, type JsonValue } from "../../src/core/json.js";
import type {
  anthropicFeedback,
  anthropicMessages,
  renderAnthropicTools,
} from "../../src/interop/dialects/anthropic.js";
import type { geminiFeedback, geminiMessages } from "../../src/interop/dialects/gemini.js";
import { renderGeminiTools } from "../../src/interop/dialects/gemini.js";
import { DIALECT_NAMES, DIALECTS, renderTools } from "../../src/interop/dialects/index.js";
import type { mcpFeedback } from "../../src/interop/dialects/mcp.js";
import { renderMcpTools } from "../../src/interop/dialects/mcp.js";
import type { chatFeedback } from "../../src/interop/dialects/openai-chat.js";
import { renderChatTools } from "../../src/interop/dialects/openai-chat.js";
import type { responsesFeedback } from "../../src/interop/dialects/openai-responses.js";
import { renderResponsesTools } from "../../src/interop/dialects/openai-responses.js";
import { DIALECT_TO_PROTO } from "../../src/interop/enums.js";
import { DEMO_PROFILES, demoView } from "../support/demo.js";

// Compile-time: what each dialect renders is assignable to the official SDK's own types (tsc
// covers test/, so a rendering the SDK would not accept fails `npm run typecheck`).
expectTypeOf<ReturnType<typeof renderChatTools>>().toExtend<ChatCompletionFunctionTool[]>();
expectTypeOf<ReturnType<typeof chatFeedback>>().toExtend<ChatCompletionToolMessageParam>();
expectTypeOf<ReturnType<typeof renderResponsesTools>>().toExtend<FunctionTool[]>();
expectTypeOf<
  ReturnType<typeof responsesFeedback>
>().toExtend<ResponseInputItem.FunctionCallOutput>();
expectTypeOf<ReturnType<typeof renderAnthropicTools>>().toExtend<Anthropic.Tool[]>();
expectTypeOf<ReturnType<typeof anthropicFeedback>>().toExtend<Anthropic.ToolResultBlockParam>();
expectTypeOf<ReturnType<typeof anthropicMessages>>().toExtend<Anthropic.MessageParam[]>();
expectTypeOf<ReturnType<typeof renderGeminiTools>>().toExtend<GeminiSdkTool[]>();
expectTypeOf<ReturnType<typeof geminiFeedback>>().toExtend<Part>();
expectTypeOf<ReturnType<typeof geminiMessages>>().toExtend<Content[]>();
expectTypeOf<ReturnType<typeof renderMcpTools>>().toExtend<ListToolsResult>();
expectTypeOf<ReturnType<typeof mcpFeedback>>().toExtend<
  JSONRPCResultResponse | JSONRPCErrorResponse
>();

/** Every subschema of a schema (through properties, items, allOf, anyOf, not). */
function subschemas(schema: JsonValue): JsonValue[] {
  if (!isJsonObject(schema)) return [schema];
  const nested: JsonValue[] = [];
  if (isJsonObject(schema["properties"])) nested.push(...Object.values(schema["properties"]));
  if (schema["items"] !== undefined) nested.push(schema["items"]);
  for (const key of ["allOf", "anyOf"]) if (Array.isArray(schema[key])) nested.push(...schema[key]);
  if (schema["not"] !== undefined) nested.push(schema["not"]);
  return [schema, ...nested.flatMap(subschemas)];
}

describe.each(DEMO_PROFILES)("renderings of the %s view", (profile) => {
  const view = demoView(profile);

  it("parse as an MCP tools/list result with the MCP SDK's own schema", () => {
    expect(() => ListToolsResultSchema.parse(renderTools(view, "mcp"))).not.toThrow();
  });

  it("give Gemini no keyword its Schema refuses, and bound values a type", () => {
    const declarations = renderGeminiTools(view).flatMap((t) => t.functionDeclarations);
    expect(declarations.map((d) => d.name)).toEqual(view.tools.map((t) => t.name));
    for (const d of declarations) {
      for (const s of subschemas(d.parametersJsonSchema)) {
        expect(s, d.name).not.toBe(false);
        if (!isJsonObject(s)) continue;
        for (const k of ["const", "not", "allOf"])
          expect(Object.keys(s), `${d.name}: ${k}`).not.toContain(k);
        if (Array.isArray(s["enum"])) expect(s["type"], `${d.name}: a typed enum`).toBeDefined();
      }
    }
  });

  it("always give OpenAI Responses an explicit strict, true only for schemas already strict", () => {
    for (const t of renderResponsesTools(view)) {
      expect(typeof t.strict).toBe("boolean");
      if (t.strict) {
        const properties = Object.keys(t.parameters["properties"] as object);
        expect(t.parameters["required"]).toEqual(expect.arrayContaining(properties));
      }
    }
  });

  it("mark requires-approval tools in every dialect's descriptions", () => {
    const held = view.tools.filter((t) => t.status === "requires_approval").map((t) => t.name);
    const descriptions = [
      ...renderChatTools(view).map((t) => [t.function.name, t.function.description]),
      ...renderMcpTools(view).tools.map((t) => [t.name, t.description]),
    ];
    for (const [name, description] of descriptions)
      expect(String(description).includes("Requires the owner's approval"), String(name)).toBe(
        held.includes(String(name)),
      );
  });
});

describe("the dialect table", () => {
  it("has a codec for every proto dialect and the proto a value for every codec", () => {
    expect(Object.keys(DIALECTS).sort()).toEqual([...DIALECT_NAMES].sort());
    expect(Object.keys(DIALECT_TO_PROTO).sort()).toEqual([...DIALECT_NAMES].sort());
  });

  it("renders an empty view as an empty tool list in every dialect", () => {
    const empty = { grantId: "g", catalogVersion: "v", mode: "live" as const, tools: [] };
    for (const name of DIALECT_NAMES)
      expect(JSON.stringify(renderTools(empty, name)), name).toMatch(/^(\[\]|\{"tools":\[\]\})$/);
  });
});

describe("MCP annotations", () => {
  const byName = new Map(
    renderMcpTools(demoView("owner-assistant")).tools.map((t) => [t.name, t.annotations]),
  );

  it("follow MCP's definitions: web tools are open-world, a replacing write is destructive", () => {
    expect(byName.get("web_search")).toMatchObject({ readOnlyHint: true, openWorldHint: true });
    expect(byName.get("fetch_url")).toMatchObject({ readOnlyHint: true, openWorldHint: true });
    expect(byName.get("write_file")).toEqual({
      readOnlyHint: false,
      destructiveHint: true,
      openWorldHint: false,
    });
    expect(byName.get("read_email")).toEqual({ readOnlyHint: true, openWorldHint: false });
  });

  it("take what the catalog sets over what the effect suggests", () => {
    expect(byName.get("draft_email")).toEqual({
      readOnlyHint: false,
      destructiveHint: false,
      openWorldHint: false,
    });
    expect(byName.get("send_email")).toEqual({
      readOnlyHint: false,
      destructiveHint: false,
      openWorldHint: true,
    });
    expect(byName.get("update_deal")).toMatchObject({ idempotentHint: true });
  });

  it("leave outputSchema out, so the MCP client accepts results without structuredContent", () => {
    const tools = ListToolsResultSchema.parse(
      renderTools(demoView("owner-assistant"), "mcp"),
    ).tools;
    expect(tools.some((t) => t.outputSchema !== undefined)).toBe(false);
    const result: CallToolResult = CallToolResultSchema.parse({
      content: [{ type: "text", text: "ok" }],
    });
    expect(result.isError).toBeUndefined();
  });
});
