/**
 * A generated catalog and policy of any size, for benchmarks that show how a cost grows (or does
 * not) with the catalog and the grant: `npm run bench:authorize-size`, and any bench that needs
 * "a 1,000-action catalog". Every action has a tool with a small closed input schema; some carry
 * a resource template, constraints, binds and rules, so a grant has caveats in proportion.
 *
 *   const files = writeGeneratedFixtures(dir, { actions: 1000, granted: 500 });
 *   // files.catalog, files.policy: paths for CharterConfig; GENERATED_PROFILE composes the grant.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";

/** How big the generated catalog and the grant its profile composes are. */
export interface GeneratedSizes {
  /** Actions in the catalog. */
  readonly actions: number;
  /** Actions the profile grants (allowed, with every tenth of them approval-required instead), at most `actions`. */
  readonly granted: number;
}

/** The profile of the generated policy whose grant holds `granted` actions. */
export const GENERATED_PROFILE = "generated";

/** The catalog version a generated catalog of `actions` actions carries. */
export function generatedVersion(sizes: GeneratedSizes): string {
  return `generated-${sizes.actions}-${sizes.granted}`;
}

/** The id and tool name of the i-th generated action. */
export function generatedAction(i: number): { readonly id: string; readonly tool: string } {
  const n = String(i).padStart(5, "0");
  return { id: `gen.action_${n}`, tool: `gen_tool_${n}` };
}

/** Arguments valid for the i-th action's schema (and within the policy's constraints and binds). */
export function generatedArguments(i: number): Record<string, unknown> {
  return { account: `acct_${i}`, amount: 40, currency: "EUR", note: "generated call" };
}

/** An allowed action (no approval, no rule matching `generatedArguments`) of a generated grant: the one benchmarks call. */
export function allowedGeneratedAction(sizes: GeneratedSizes): number {
  // The middle of the granted range, off the tenth (approval-required) slots.
  const i = Math.floor(sizes.granted / 2);
  return i % 10 === 0 ? i + 1 : i;
}

/** The catalog document: `actions` tools, every seventh with a resource template. */
export function generatedCatalog(sizes: GeneratedSizes): Record<string, unknown> {
  const actions = Array.from({ length: sizes.actions }, (_, i) => {
    const { id, tool } = generatedAction(i);
    return {
      id,
      effect: i % 3 === 0 ? "read" : "write",
      delegable: i % 2 === 0,
      ...(i % 7 === 0 ? { resource: "account/{account}" } : {}),
      tool: {
        name: tool,
        description: `Generated tool ${i}: moves an amount on an account. Benchmarks only.`,
        inputSchema: {
          type: "object",
          additionalProperties: false,
          required: ["account", "amount", "currency"],
          properties: {
            account: { type: "string", pattern: "^acct_[0-9]+$", maxLength: 32 },
            amount: { type: "number", minimum: 0, maximum: 100000 },
            currency: { type: "string", enum: ["EUR", "USD", "GBP"] },
            note: { type: "string", maxLength: 200 },
          },
        },
      },
    };
  });
  return { version: generatedVersion(sizes), actions };
}

/**
 * The policy document: one grant source allowing the first `granted` actions (every tenth of
 * them approval-required instead), constraints on every fifth, a bind on every eleventh, a rule on
 * every thirteenth; a global source denying the last five actions of the catalog.
 */
export function generatedPolicy(sizes: GeneratedSizes): Record<string, unknown> {
  const granted = Math.min(sizes.granted, sizes.actions);
  const ids = (from: number, to: number, keep: (i: number) => boolean) =>
    Array.from({ length: Math.max(0, to - from) }, (_, k) => from + k)
      .filter(keep)
      .map((i) => generatedAction(i).id);
  const constraints: Record<string, unknown> = {};
  const rules: Record<string, unknown> = {};
  for (let i = 0; i < granted; i++) {
    const { id } = generatedAction(i);
    if (i % 5 === 0 || i % 11 === 0) {
      constraints[id] = {
        ...(i % 5 === 0 ? { schema: { properties: { amount: { maximum: 5000 } } } } : {}),
        ...(i % 11 === 0 ? { bind: { currency: "EUR" } } : {}),
      };
    }
    if (i % 13 === 0)
      rules[id] = [
        {
          when: { properties: { amount: { minimum: 1000 } }, required: ["amount"] },
          then: "deny",
          reason: "Amounts of 1000 or more are not moved here.",
        },
      ];
  }
  // A fixed handful of denials, so that two catalogs with the same grant size give grants of the same size.
  const denyFrom = Math.max(granted, sizes.actions - 5);
  return {
    version: `${generatedVersion(sizes)}-policy`,
    defaults: { maxRuntimeSeconds: 3600 },
    sources: {
      "generated-grant": {
        allow: ids(0, granted, (i) => i % 10 !== 0),
        approval: ids(0, granted, (i) => i % 10 === 0),
        limits: { maxDelegationDepth: 2 },
        constraints,
        rules,
      },
      "generated-guardrails": { global: true, deny: ids(denyFrom, sizes.actions, () => true) },
    },
    profiles: {
      [GENERATED_PROFILE]: { description: "The generated grant.", sources: ["generated-grant"] },
    },
  };
}

/** Writes the catalog and policy as JSON (which the YAML loader reads) into `dir`; answers their paths. */
export function writeGeneratedFixtures(
  dir: string,
  sizes: GeneratedSizes,
): { readonly catalog: string; readonly policy: string } {
  const catalog = join(dir, `catalog-${sizes.actions}.json`);
  const policy = join(dir, `policy-${sizes.actions}-${sizes.granted}.json`);
  writeFileSync(catalog, JSON.stringify(generatedCatalog(sizes)));
  writeFileSync(policy, JSON.stringify(generatedPolicy(sizes)));
  return { catalog, policy };
}
