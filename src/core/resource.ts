import { isJsonObject } from "./json.js";

/** A parsed resource template such as `mailbox/{to}`: literal text with argument placeholders. */
export interface ResourceTemplate {
  readonly template: string;
  /** The argument names the template reads, in order of appearance. */
  readonly arguments: readonly string[];
}

const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** Parses a template; answers a message instead when the braces do not form `{name}` placeholders. */
export function parseResourceTemplate(template: string): ResourceTemplate | string {
  const stripped = template.replace(PLACEHOLDER, "");
  if (stripped.includes("{") || stripped.includes("}"))
    return "placeholders must look like {argument_name}";
  if (template.trim() === "") return "template is empty";
  const names = [...template.matchAll(PLACEHOLDER)].map((m) => m[1] as string);
  return { template, arguments: [...new Set(names)] };
}

/**
 * Resolves a template against a call's arguments. A missing argument, or one that is not a
 * string, number or boolean, answers `{ missing: name }`.
 */
export function resolveResource(
  t: ResourceTemplate,
  args: unknown,
): { resource: string } | { missing: string } {
  let missing: string | undefined;
  const resource = t.template.replace(PLACEHOLDER, (_match, name: string) => {
    const value = isJsonObject(args) ? args[name] : undefined;
    if (typeof value === "string" || typeof value === "number" || typeof value === "boolean")
      return String(value);
    missing ??= name;
    return "";
  });
  return missing === undefined ? { resource } : { missing };
}
