import type { CatalogView, ViewEntry } from "../core/project.js";
import type { JsonObject, JsonValue } from "../core/json.js";

/** The model frameworks a catalog can be rendered for. */
export type DialectName = "neutral" | "openai_chat" | "openai_responses" | "anthropic" | "mcp" | "gemini";

const APPROVAL_NOTE = " (Requires the owner's approval: a call is held until the owner decides.)";

function describe(t: ViewEntry): string {
  return t.status === "requires_approval" ? `${t.description}${APPROVAL_NOTE}` : t.description;
}

/**
 * Renders a view's tools the way a framework expects its tool list. Only what the view holds is
 * rendered, so an ungranted tool cannot appear in any dialect.
 */
export function renderTools(view: CatalogView, dialect: DialectName): JsonValue {
  const tools = view.tools;
  switch (dialect) {
    case "neutral":
      return tools.map((t) => ({
        name: t.name,
        description: t.description,
        inputSchema: t.inputSchema,
        ...(t.outputSchema ? { outputSchema: t.outputSchema } : {}),
        status: t.status,
        effect: t.effect,
      }));
    case "openai_chat":
      return tools.map((t) => ({ type: "function", function: { name: t.name, description: describe(t), parameters: t.inputSchema } }));
    case "openai_responses":
      return tools.map((t) => ({ type: "function", name: t.name, description: describe(t), parameters: t.inputSchema }));
    case "anthropic":
      return tools.map((t) => ({ name: t.name, description: describe(t), input_schema: t.inputSchema }));
    case "mcp":
      return {
        tools: tools.map((t) => ({
          name: t.name,
          description: describe(t),
          inputSchema: t.inputSchema,
          ...(t.outputSchema ? { outputSchema: t.outputSchema } : {}),
          annotations: mcpAnnotations(t),
        })),
      };
    case "gemini":
      return [{ functionDeclarations: tools.map((t) => ({ name: t.name, description: describe(t), parameters: t.inputSchema })) }];
  }
}

function mcpAnnotations(t: ViewEntry): JsonObject {
  return {
    readOnlyHint: t.effect === "read",
    destructiveHint: t.effect === "destructive",
    openWorldHint: t.effect === "external",
  };
}
