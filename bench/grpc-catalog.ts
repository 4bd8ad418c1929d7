/**
 * A generated catalog and policy for the benchmarks: `actions` actions with tools, of which the
 * first `granted` are allowed by the profile `generated` (every tenth with a constraint, so views
 * are narrowed as well as projected) and the next ten need an approval. Written as JSON, which the catalog and policy loaders read.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";

/** Tool name of generated action `i`. */
export function generatedToolName(i: number): string {
  return `gen_tool_${String(i).padStart(5, "0")}`;
}

/** The generated catalog and policy documents (plain JSON values). */
export function generatedDocuments(
  actions: number,
  granted: number,
): { catalog: unknown; policy: unknown } {
  const ids = Array.from({ length: actions }, (_, i) => `gen.action_${String(i).padStart(5, "0")}`);
  const catalog = {
    version: `generated-${actions}`,
    actions: ids.map((id, i) => ({
      id,
      effect: i % 3 === 0 ? "write" : "read",
      delegable: true,
      tool: {
        name: generatedToolName(i),
        description: `Generated tool number ${i}: looks something up and returns a short answer.`,
        inputSchema: {
          type: "object",
          properties: {
            query: { type: "string", minLength: 1, maxLength: 400 },
            limit: { type: "integer", minimum: 1, maximum: 100 },
            mode: { type: "string", enum: ["fast", "thorough", "cached"] },
          },
          required: ["query"],
          additionalProperties: false,
        },
      },
    })),
  };
  const allowed = ids.slice(0, granted);
  const constraints = Object.fromEntries(
    allowed
      .filter((_, i) => i % 10 === 0)
      .map((id) => [id, { schema: { properties: { mode: { enum: ["fast", "cached"] } } } }]),
  );
  const policy = {
    version: `generated-policy-${actions}-${granted}`,
    sources: {
      generated: {
        kind: "grant",
        description: "Generated grant for the benchmarks.",
        allow: allowed,
        approval: ids.slice(granted, granted + 10),
        constraints,
      },
    },
    profiles: { generated: { description: "Holds the generated grant.", sources: ["generated"] } },
  };
  return { catalog, policy };
}

/** Writes the generated documents into `dir`; returns their paths. */
export function writeGeneratedCatalog(
  dir: string,
  actions: number,
  granted: number,
): { catalog: string; policy: string } {
  const { catalog, policy } = generatedDocuments(actions, granted);
  const paths = {
    catalog: join(dir, "generated-catalog.json"),
    policy: join(dir, "generated-policy.json"),
  };
  writeFileSync(paths.catalog, JSON.stringify(catalog));
  writeFileSync(paths.policy, JSON.stringify(policy));
  return paths;
}
