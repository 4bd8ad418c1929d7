/**
 * The `pathWithin` schema keyword: a string argument that must be a canonical absolute path at or
 * under a root, checked on the path as a tool could read it. Anything a tool might read as a
 * different path is refused rather than guessed at: percent signs (a tool may percent-decode
 * `..%2f` or `%2e%2e`), backslashes (a separator on some systems), NUL and other control
 * characters (C strings end there), text that Unicode NFKC normalization changes (fullwidth dots
 * `．．` become `..`), combining marks (`\u0301..`: a tool that strips or composes marks reads
 * `..`), default-ignorable code points (zero-width spaces and joiners, soft hyphens, variation
 * selectors, tags: `.\u200b.` is `..` to whatever drops them), bidi controls, line and paragraph
 * separators and lone surrogates, `.` and `..` segments, and empty segments (`//`). A trailing `/`
 * is allowed.
 */
export const PATH_WITHIN = "pathWithin";

/** Why `path` is not a canonical path within `root`; undefined when it is. Never quotes the path. */
export function pathProblem(path: string, root: string): string | undefined {
  const shape = canonicalPathProblem(path);
  if (shape !== undefined) return shape;
  const base = root.endsWith("/") ? root : `${root}/`;
  if (path !== root && path !== base && !path.startsWith(base))
    return `is outside ${JSON.stringify(root)}`;
  return undefined;
}

/** Bidi embeddings, overrides, isolates and marks (all default-ignorable too; named for the message). */
const BIDI_CONTROL = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

/** Why `path` is not a canonical absolute path; undefined when it is. */
export function canonicalPathProblem(path: string): string | undefined {
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f-\u009f]/.test(path)) return "holds a NUL or control character";
  if (/\p{M}/u.test(path)) return "holds a combining mark";
  if (BIDI_CONTROL.test(path)) return "holds a bidi control character";
  if (/\p{Default_Ignorable_Code_Point}/u.test(path))
    return "holds a zero-width or other invisible (default-ignorable) character";
  if (/[\u2028\u2029]/.test(path)) return "holds a line or paragraph separator";
  if (/\p{Cs}/u.test(path)) return "holds a lone surrogate";
  if (path.includes("%")) return "holds a percent sign (percent-encoding is ambiguous)";
  if (path.includes("\\")) return "holds a backslash";
  if (path.normalize("NFKC") !== path)
    return "is not in Unicode normal form NFKC (e.g. fullwidth dots)";
  if (!path.startsWith("/")) return "is not an absolute path";
  const segments = path.split("/").slice(1);
  for (const [i, segment] of segments.entries()) {
    if (segment === "." || segment === "..") return "holds a . or .. segment";
    if (segment === "" && i < segments.length - 1) return "holds an empty segment (//)";
  }
  return undefined;
}

/** A regular expression (as JSON Schema `pattern` text) that a path within `root` matches: what a model is shown. */
export function rootPattern(root: string): string {
  const base = root.endsWith("/") ? root.slice(0, -1) : root;
  return `^${base.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}(/|$)`;
}
