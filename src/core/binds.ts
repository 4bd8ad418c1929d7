import { cloneJson, compareCodeUnits, jsonEqual, setOwn, type JsonObject } from "./json.js";

/** Two bind sets merged, or the first argument they bind to different values. */
export type BindMerge =
  | { readonly ok: true; readonly binds: JsonObject }
  | { readonly ok: false; readonly conflict: string };

/**
 * Merges the binds of `from` into those of `into` (neither is changed): an argument bound in
 * both must be bound to equal JSON values, else the merge names it as the conflict. The merged
 * binds are a fresh copy with keys in code-unit order, as canonical JSON sorts them.
 */
export function mergeBinds(into: JsonObject, from: JsonObject): BindMerge {
  for (const [name, value] of Object.entries(from)) {
    if (Object.hasOwn(into, name) && !jsonEqual(into[name], value))
      return { ok: false, conflict: name };
  }
  const merged: JsonObject = {};
  for (const source of [into, from])
    for (const [name, value] of Object.entries(source)) setOwn(merged, name, value);
  const binds: JsonObject = {};
  for (const name of Object.keys(merged).sort(compareCodeUnits))
    setOwn(binds, name, cloneJson(merged[name] as JsonObject[string]));
  return { ok: true, binds };
}
