import { describe, expect, it } from "vitest";
import {
  acceptsValue,
  decide,
  isJsonObject,
  projectCatalog,
  type JsonObject,
  type JsonValue,
  type ReasonCode,
  type TaskGrant,
} from "../../src/core/index.js";
import { DIALECT_NAMES, renderTools, type DialectName } from "../../src/interop/dialects/index.js";
import { demoGrant, demoPair } from "../support/demo.js";

// What the model is shown and what Authorize accepts agree: arguments a dialect's rendered schema
// accepts are never denied INVALID_ARGUMENTS, and arguments it refuses are denied —
// INVALID_ARGUMENTS, or CONSTRAINT_VIOLATION when what refused them is the grant's narrowing (a
// bound value, the workspace path), which a dialect that cannot express it says in words instead.

// The demo pair, the grants and the renderings are deterministic: built once per profile and
// dialect here, not once per golden call (each build compiles every schema of the catalog again).
const { catalog } = demoPair();
const grants = new Map<string, TaskGrant>();
const renderings = new Map<string, JsonValue>();
function grantOf(profile: string): TaskGrant {
  const known = grants.get(profile);
  if (known) return known;
  const grant = demoGrant(profile);
  grants.set(profile, grant);
  return grant;
}

/** A dialect's rendering of the profile's view. */
function rendering(dialect: DialectName, profile: string): JsonValue {
  const key = `${dialect} ${profile}`;
  const known = renderings.get(key);
  if (known !== undefined) return known;
  const rendered = renderTools(projectCatalog(grantOf(profile), catalog), dialect);
  renderings.set(key, rendered);
  return rendered;
}

/** The input schema of `tool` in a dialect's rendering of the profile's view. */
function renderedSchema(dialect: DialectName, profile: string, tool: string): JsonObject {
  const rendered = rendering(dialect, profile);
  const list: JsonValue[] = Array.isArray(rendered)
    ? rendered
    : isJsonObject(rendered) && Array.isArray(rendered["tools"])
      ? rendered["tools"]
      : [];
  const entries = list.flatMap((e) =>
    isJsonObject(e) && Array.isArray(e["functionDeclarations"]) ? e["functionDeclarations"] : [e],
  );
  for (const e of entries) {
    if (!isJsonObject(e)) continue;
    const fn = isJsonObject(e["function"]) ? e["function"] : e;
    if (fn["name"] !== tool) continue;
    const schema =
      fn["parameters"] ??
      fn["input_schema"] ??
      fn["inputSchema"] ??
      fn["parametersJsonSchema"] ??
      fn["parameters_json_schema"];
    if (isJsonObject(schema)) return schema;
  }
  throw new Error(`${dialect}: no tool ${tool} in the ${profile} view`);
}

type Golden = readonly [
  profile: string,
  tool: string,
  args: JsonObject,
  denied: ReasonCode | undefined,
];

/** Golden calls over the demo profiles and what Authorize says of each (undefined: not denied). */
const GOLDEN: readonly Golden[] = [
  ["owner-assistant", "search_email", { query: "invoice" }, undefined], // optional fields absent
  ["owner-assistant", "search_email", { query: "invoice", folder: "sent", limit: 5 }, undefined],
  ["owner-assistant", "search_email", { query: "invoice", folder: null }, "INVALID_ARGUMENTS"], // null is not "absent"
  ["owner-assistant", "search_email", { query: "invoice", limit: 0 }, "INVALID_ARGUMENTS"],
  ["owner-assistant", "search_email", {}, "INVALID_ARGUMENTS"],
  ["owner-assistant", "read_invoice", { invoice_id: "inv_ABC123" }, undefined], // strict in Responses
  ["owner-assistant", "read_invoice", { invoice_id: "inv_ABC123", extra: 1 }, "INVALID_ARGUMENTS"],
  ["owner-assistant", "read_file", { path: "/workspace/notes.md" }, undefined],
  ["owner-assistant", "read_file", { path: "/etc/passwd" }, "CONSTRAINT_VIOLATION"], // the workspace constraint
  ["owner-assistant", "read_file", { path: "/workspace/../etc/passwd" }, "CONSTRAINT_VIOLATION"],
  ["owner-assistant", "read_file", { path: "relative.txt" }, "INVALID_ARGUMENTS"], // the tool's own pattern
  ["owner-assistant", "message_owner", { chat_id: 100200300, text: "Done." }, undefined], // the bound value
  ["owner-assistant", "message_owner", { chat_id: 555, text: "Done." }, "CONSTRAINT_VIOLATION"],
  [
    "owner-assistant",
    "issue_refund",
    { order_id: "ord_A1B2C3", amount: 0, currency: "EUR", reason: "other" },
    "INVALID_ARGUMENTS",
  ],
  [
    "email-drafter",
    "send_email",
    { to: "ana@example.com", subject: "Draft", body: "Review." },
    undefined,
  ],
  [
    "email-drafter",
    "send_email",
    { to: "eve@example.org", subject: "Draft", body: "Review." },
    "CONSTRAINT_VIOLATION",
  ],
  [
    "receptionist",
    "create_calendar_event",
    {
      calendar_id: "primary",
      title: "Chat",
      start: "2025-01-01T10:00:00Z",
      end: "2025-01-01T10:30:00Z",
    },
    undefined,
  ],
  [
    "receptionist",
    "create_calendar_event",
    {
      calendar_id: "team",
      title: "Chat",
      start: "2025-01-01T10:00:00Z",
      end: "2025-01-01T10:30:00Z",
    },
    "CONSTRAINT_VIOLATION",
  ],
  ["receptionist", "lookup_contact", { query: "Rui", fields: ["name"] }, undefined],
  ["receptionist", "lookup_contact", { query: "Rui", fields: ["email"] }, "CONSTRAINT_VIOLATION"],
];

describe.each(DIALECT_NAMES)("%s renderings agree with Authorize", (dialect) => {
  it.each(GOLDEN.map((g) => [`${g[0]} ${g[1]} ${JSON.stringify(g[2])}`, g] as const))(
    "%s",
    (_name, [profile, tool, args, denied]) => {
      const verdict = decide(
        grantOf(profile),
        catalog,
        { callId: "c1", toolName: tool, arguments: args },
        { now: 1_700_000_100 },
      );
      expect(verdict.decision === "deny" ? verdict.reason?.code : undefined).toBe(denied);
      const accepted = acceptsValue(catalog.schemas, renderedSchema(dialect, profile, tool), args);
      if (accepted) expect(verdict.reason?.code).not.toBe("INVALID_ARGUMENTS");
      else
        expect(
          verdict.decision === "deny" &&
            ["INVALID_ARGUMENTS", "CONSTRAINT_VIOLATION"].includes(verdict.reason?.code ?? ""),
        ).toBe(true);
      // A refusal for the tool's own reasons is shown in every dialect's schema.
      if (denied === "INVALID_ARGUMENTS") expect(accepted).toBe(false);
    },
  );
});
