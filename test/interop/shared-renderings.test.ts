import { describe, expect, it } from "vitest";
import { isJsonObject, type JsonObject } from "../../src/core/json.js";
import { isSharedEntry, projectCatalog, type CatalogView } from "../../src/core/project.js";
import type { TaskGrant } from "../../src/core/grant.js";
import { DIALECT_NAMES, renderTools, toolsJson } from "../../src/interop/dialects/index.js";
import { viewToProto } from "../../src/interop/view-codec.js";
import { demoGrant, demoPair, DEMO_PROFILES } from "../support/demo.js";

// An entry without caveats is made once per loaded action and shared by every view, with its
// renderings, JSON text and proto message: what is shared must be exactly what a fresh rendering
// gives, and an entry narrowed by a grant's own caveats must never be one of them.

const { catalog } = demoPair();

function grantOf(profile: string): TaskGrant {
  return demoGrant(profile);
}

/** The same view with fresh, unfrozen entries (rendered without any memo). */
function freshCopy(view: CatalogView): CatalogView {
  return structuredClone(view);
}

/** A copy of `grant` that binds one string argument of an action it allows without caveats. */
function withBind(grant: TaskGrant): { grant: TaskGrant; actionId: string; argument: string } {
  for (const actionId of grant.allowed) {
    if (Object.hasOwn(grant.caveats, actionId)) continue;
    const properties = catalog.actions.get(actionId)?.tool?.inputSchema["properties"];
    if (!isJsonObject(properties)) continue;
    const argument = Object.keys(properties).find(
      (name) => isJsonObject(properties[name]) && properties[name]["type"] === "string",
    );
    if (argument === undefined) continue;
    const caveats = {
      ...grant.caveats,
      [actionId]: { constraints: [], binds: { [argument]: "bound-value" }, rules: [] },
    };
    return { grant: { ...grant, caveats }, actionId, argument };
  }
  throw new Error("the demo grant must allow an action with a string argument and no caveats");
}

describe("shared view entries", () => {
  it.each(DEMO_PROFILES)("render %s the same as fresh entries, in every dialect", (profile) => {
    const view = projectCatalog(grantOf(profile), catalog);
    for (const dialect of DIALECT_NAMES) {
      const tools = renderTools(view, dialect);
      const fresh = renderTools(freshCopy(view), dialect);
      expect(tools).toEqual(fresh);
      expect(toolsJson(tools)).toBe(JSON.stringify(fresh));
      // Twice: the second time from the texts kept.
      expect(toolsJson(renderTools(view, dialect))).toBe(JSON.stringify(fresh));
    }
    expect(viewToProto(view)).toEqual(viewToProto(freshCopy(view)));
  });

  it("are shared between views, frozen, and never stand for an entry narrowed by caveats", () => {
    const plain = grantOf("owner-assistant");
    const { grant: bound, actionId, argument } = withBind(plain);
    const first = projectCatalog(plain, catalog);
    const second = projectCatalog({ ...plain, id: "grt_other" }, catalog);
    const narrowed = projectCatalog(bound, catalog);
    const entryOf = (view: CatalogView) => {
      const entry = view.tools.find((t) => t.actionId === actionId);
      if (entry === undefined) throw new Error(`the view must show ${actionId}`);
      return entry;
    };

    expect(entryOf(second)).toBe(entryOf(first));
    expect(isSharedEntry(entryOf(first))).toBe(true);
    expect(Object.isFrozen(entryOf(first))).toBe(true);
    expect(() => {
      entryOf(first).inputSchema["type"] = "string";
    }).toThrow(TypeError);

    const own = entryOf(narrowed);
    expect(own).not.toBe(entryOf(first));
    expect(isSharedEntry(own)).toBe(false);
    expect((own.inputSchema["properties"] as JsonObject)[argument]).toMatchObject({
      const: "bound-value",
    });
    expect(JSON.stringify(renderTools(narrowed, "openai_chat"))).toContain('"const":"bound-value"');
    expect(JSON.stringify(renderTools(first, "openai_chat"))).not.toContain("bound-value");
    // The other entries of the narrowed view are still the shared ones.
    const other = narrowed.tools.find(
      (t) => t.actionId !== actionId && !Object.hasOwn(bound.caveats, t.actionId),
    );
    expect(other).toBe(first.tools.find((t) => t.actionId === other?.actionId));
  });
});
