import { describe, expect, it } from "vitest";
import {
  buildPolicy,
  compose,
  createSchemaCompiler,
  decide,
  narrowSchema,
  projectCatalog,
  type ActionCaveats,
  type JsonObject,
  type JsonSchema,
} from "../../src/core/index.js";
import { catalogOf } from "../support/vectors.js";

const schemas = createSchemaCompiler();
const accepts = (schema: JsonSchema, value: unknown) =>
  schemas.compile(schema).check(value).length === 0;
const caveats = (parts: Partial<ActionCaveats>): ActionCaveats => ({
  constraints: [],
  binds: {},
  rules: [],
  ...parts,
});
const tool: JsonObject = {
  type: "object",
  properties: { folder: { type: "string", enum: ["inbox", "sent", "archive"] } },
};

describe("narrowSchema() never offers a value the grant forbids", () => {
  it("keeps two sources' different consts unsatisfiable instead of showing the last one", () => {
    // Two sources each pin `folder` to a value the tool accepts (so both load), but to different values.
    const grant = caveats({
      constraints: [
        { properties: { folder: { const: "inbox" } } },
        { properties: { folder: { const: "sent" } } },
      ],
    });
    const view = narrowSchema(tool, grant);
    const truth = (v: unknown) => accepts(tool, v) && grant.constraints.every((c) => accepts(c, v));
    expect(truth({ folder: "sent" })).toBe(false); // decide() denies this call…
    expect(accepts(view, { folder: "sent" })).toBe(false); // …but the view offers it: fails, view is {const: "sent"}
  });

  it("does not drop the tool's enum when a constraint's const lies outside it", () => {
    const view = narrowSchema(
      tool,
      caveats({ constraints: [{ properties: { folder: { const: "spam" } } }] }),
    );
    expect(accepts(tool, { folder: "spam" })).toBe(false);
    expect(accepts(view, { folder: "spam" })).toBe(false); // fails: enum deleted, const "spam" shown
  });

  it("does not ignore a constraint's enum when the tool (or an earlier caveat) fixes a const outside it", () => {
    const view = narrowSchema(
      tool,
      caveats({
        constraints: [
          { properties: { folder: { const: "inbox" } } },
          { properties: { folder: { enum: ["sent"] } } },
        ],
      }),
    );
    expect(accepts(view, { folder: "inbox" })).toBe(false); // fails: the enum is skipped because a const exists
  });

  it("shows a bind that a constraint forbids as impossible rather than as the fixed value", () => {
    const grant = caveats({
      constraints: [{ properties: { folder: { enum: ["inbox"] } } }],
      binds: { folder: "sent" },
    });
    expect(accepts(narrowSchema(tool, grant), { folder: "sent" })).toBe(false); // fails: {const: "sent"}
  });

  it("produces a schema that compiles when enums are disjoint", () => {
    const view = narrowSchema(
      tool,
      caveats({
        constraints: [
          { properties: { folder: { enum: ["inbox"] } } },
          { properties: { folder: { enum: ["sent"] } } },
        ],
      }),
    );
    expect(() => schemas.compile(view)).not.toThrow(); // fails: "enum must have non-empty array"
  });
});

describe("narrowSchema() output shares nothing with the grant", () => {
  it("lets a renderer mutate the view without touching the grant's caveats", () => {
    const grant = caveats({
      constraints: [{ properties: { extra: { type: "string", enum: ["x"] } } }],
      binds: { folder: ["inbox"] },
    });
    const view = narrowSchema({ type: "object", properties: {} }, grant);
    const props = view["properties"] as Record<string, Record<string, unknown>>;
    (props["extra"]?.["enum"] as string[]).push("widened");
    (props["folder"]?.["const"] as string[]).push("sent");
    expect(grant.constraints).toEqual([{ properties: { extra: { type: "string", enum: ["x"] } } }]); // fails: enum now ["x","widened"]
    expect(grant.binds).toEqual({ folder: ["inbox"] }); // fails: bind now ["inbox","sent"]
  });
});

describe("end to end: a valid policy whose view offers a value decide() denies", () => {
  it('shows folder const "sent" while every call with folder "sent" is denied', () => {
    const catalog = catalogOf("basic");
    const policy = buildPolicy(
      {
        version: "p",
        sources: {
          a: {
            allow: ["email.read"],
            constraints: {
              "email.read": { schema: { properties: { folder: { const: "inbox" } } } },
            },
          },
          b: {
            global: true,
            constraints: {
              "email.read": { schema: { properties: { folder: { const: "sent" } } } },
            },
          },
        },
        profiles: { p: { sources: ["a"] } },
      },
      catalog,
      "p.yaml",
    );
    const r = compose(
      { profile: "p", subject: "s", owner: "o", purpose: "x" },
      policy,
      catalog,
      1000,
      "g",
    );
    if (r.kind !== "granted") throw new Error("compose failed");
    const shown = (
      projectCatalog(r.grant, catalog).tools[0]?.inputSchema["properties"] as JsonObject
    )["folder"];
    const verdict = decide(
      r.grant,
      catalog,
      { callId: "c", toolName: "read_email", arguments: { folder: "sent" } },
      { now: 1001 },
    );
    expect(verdict.reason?.code).toBe("CONSTRAINT_VIOLATION");
    expect(shown).not.toEqual({ type: "string", const: "sent" }); // fails: the view offers exactly the denied value
  });
});
