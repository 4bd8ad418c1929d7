import type { CatalogAction } from "./catalog.js";
import { canonicalJson, sha256Hex } from "./digest.js";
import { isJsonObject, type JsonObject, type JsonSchema } from "./json.js";
import { escapeSegment, holdsWriteOnly, memberSchema } from "./summary-paths.js";

/**
 * One argument as an owner is shown it in an approval request: its value (for a path the catalog
 * lists under the action's `summary`; strings cut to {@link SUMMARY_STRING_LIMIT} characters),
 * a digest of it (any other argument), or nothing at all (a `writeOnly` argument).
 */
export type ArgumentSummary =
  | {
      readonly path: string;
      readonly shown: "value";
      readonly valueJson: string;
      readonly truncated: boolean;
    }
  | { readonly path: string; readonly shown: "digest"; readonly digest: string }
  | { readonly path: string; readonly shown: "hidden" };

/** Characters of a shown string an owner sees; longer strings are cut and marked truncated. */
export const SUMMARY_STRING_LIMIT = 80;
/** A shown object or array longer than this as canonical JSON appears as a digest instead. */
export const SUMMARY_JSON_LIMIT = 200;
/** At most this many entries; the arguments of a closed schema never come near it. */
export const SUMMARY_MAX_ENTRIES = 64;

/**
 * What an owner may see of a call's arguments (pure): shown paths as values, every other argument
 * as `sha256:<hex>` of its canonical JSON, and nothing of what the input schema marks `writeOnly`
 * (not even a digest, which could be guessed for a short secret). Entries follow the arguments'
 * keys in code-unit order, depth first.
 */
export function summarizeArguments(action: CatalogAction, args: JsonObject): ArgumentSummary[] {
  const shown = new Set(action.summary ?? []);
  const out: ArgumentSummary[] = [];
  walk(args, action.tool?.inputSchema ?? action.inputSchema, "", shown, out);
  return out.slice(0, SUMMARY_MAX_ENTRIES);
}

function walk(
  value: JsonObject,
  schema: JsonSchema | undefined,
  pointer: string,
  shown: ReadonlySet<string>,
  out: ArgumentSummary[],
): void {
  for (const key of Object.keys(value).sort()) {
    if (out.length >= SUMMARY_MAX_ENTRIES) return;
    const path = `${pointer}/${escapeSegment(key)}`;
    const member = value[key];
    const sub = memberSchema(schema, key);
    if (holdsWriteOnly(sub)) out.push({ path, shown: "hidden" });
    else if (shown.has(path)) out.push(shownValue(path, member));
    else if (isJsonObject(member) && [...shown].some((p) => p.startsWith(`${path}/`)))
      walk(member, sub, path, shown, out);
    else out.push({ path, shown: "digest", digest: digestOf(member) });
  }
}

function shownValue(path: string, value: unknown): ArgumentSummary {
  if (typeof value === "string") {
    // Cut by code points, so a surrogate pair is never split.
    const chars = Array.from(value);
    const truncated = chars.length > SUMMARY_STRING_LIMIT;
    return {
      path,
      shown: "value",
      valueJson: JSON.stringify(truncated ? chars.slice(0, SUMMARY_STRING_LIMIT).join("") : value),
      truncated,
    };
  }
  const json = canonicalJson(value);
  if (json.length > SUMMARY_JSON_LIMIT) return { path, shown: "digest", digest: digestOf(value) };
  return { path, shown: "value", valueJson: json, truncated: false };
}

function digestOf(value: unknown): string {
  return `sha256:${sha256Hex(canonicalJson(value))}`;
}
