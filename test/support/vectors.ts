import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import {
  buildCatalog,
  buildPolicy,
  compose,
  delegate,
  type Catalog,
  type ComposeRequest,
  type DelegationSpec,
  type Policy,
  type TaskGrant,
} from "../../src/core/index.js";
import { parseDocumentText } from "../../src/load/documents.js";

export const VECTOR_ROOT = new URL("../../fixtures/vectors/", import.meta.url).pathname;

/** A golden vector: a named input and the result it must give. */
export interface Vector {
  readonly name: string;
  readonly description?: string;
  readonly input: Record<string, unknown>;
  readonly expected: unknown;
  /** Strings that must not appear anywhere in the serialized result. */
  readonly absent?: readonly string[];
  readonly file: string;
}

/** All vectors of one function, from fixtures/vectors/<kind>/*.json, sorted by file name. */
export function readVectors(kind: string): Vector[] {
  const dir = join(VECTOR_ROOT, kind);
  return readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((f) => ({
      ...(JSON.parse(readFileSync(join(dir, f), "utf8")) as Omit<Vector, "file">),
      file: `${kind}/${f}`,
    }));
}

/**
 * A catalog or policy named in a vector: an inline document, or a string naming a shared file
 * (`fixtures/vectors/catalogs/<name>.yaml`, `…/policies/<name>.yaml`; "demo" is fixtures/*.yaml).
 */
function document(ref: unknown, folder: "catalogs" | "policies"): { doc: unknown; file: string } {
  if (typeof ref !== "string") return { doc: ref, file: "<inline>" };
  const file =
    ref === "demo"
      ? join(VECTOR_ROOT, "..", folder === "catalogs" ? "catalog.yaml" : "policy.yaml")
      : join(VECTOR_ROOT, folder, `${ref}.yaml`);
  return { doc: parseDocumentText(readFileSync(file, "utf8"), file), file };
}

export function catalogOf(ref: unknown): Catalog {
  const { doc, file } = document(ref, "catalogs");
  return buildCatalog(doc, file);
}

export function policyOf(ref: unknown, catalog: Catalog): Policy {
  const { doc, file } = document(ref, "policies");
  return buildPolicy(doc, catalog, file);
}

interface ComposeStep {
  readonly request: ComposeRequest;
  readonly now: number;
  readonly id: string;
}
interface DelegateStep {
  readonly spec: DelegationSpec;
  readonly now: number;
  readonly id: string;
}

/**
 * A grant named in a vector: a literal grant, or `{compose: {request, now, id}, delegations?: [...]}`
 * built with the vector's policy. Every step must succeed.
 */
export function grantOf(ref: unknown, catalog: Catalog, policy: Policy | undefined): TaskGrant {
  const r = ref as { compose?: ComposeStep; delegations?: DelegateStep[] };
  if (r.compose === undefined) return ref as TaskGrant;
  if (!policy) throw new Error("a composed grant needs a policy in the vector's input");
  const composed = compose(r.compose.request, policy, catalog, r.compose.now, r.compose.id);
  if (composed.kind !== "granted")
    throw new Error(`compose step failed: ${JSON.stringify(composed)}`);
  return delegateAll(composed.grant, r.delegations ?? [], catalog);
}

/** Applies delegation steps in order; every step but the caller's last must succeed. */
export function delegateAll(
  parent: TaskGrant,
  steps: readonly DelegateStep[],
  catalog: Catalog,
): TaskGrant {
  let grant = parent;
  for (const step of steps) {
    const result = delegate(grant, step.spec, catalog, step.now, step.id);
    if (result.kind !== "granted")
      throw new Error(`delegation step ${step.id} failed: ${JSON.stringify(result)}`);
    grant = result.grant;
  }
  return grant;
}

/** Replaces every string "$digest" in `value` with `digest`. */
export function substitute(value: unknown, placeholder: string, replacement: string): unknown {
  if (value === placeholder) return replacement;
  if (Array.isArray(value)) return value.map((v) => substitute(v, placeholder, replacement));
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, substitute(v, placeholder, replacement)]),
    );
  }
  return value;
}
