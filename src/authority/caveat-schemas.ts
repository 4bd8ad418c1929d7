import type { Catalog } from "../core/catalog.js";
import type { DelegationSpec } from "../core/delegate.js";
import type { JsonSchema } from "../core/json.js";
import { invalidRequest } from "./errors.js";

/**
 * Compiles every schema a delegation adds (constraints and rules' `when`) with the catalog's
 * compiler before anything is derived: one that does not compile, such as a pattern the
 * linear-time engine refuses (a backreference, a lookaround), is INVALID_REQUEST naming the field
 * as the contract spells it, e.g. `caveats["email.draft"].constraints_json[0]`. Nothing is
 * recorded; a schema is never left to fail later, at Authorize.
 */
export function checkCaveatSchemas(spec: DelegationSpec, catalog: Catalog): void {
  for (const [actionId, caveats] of Object.entries(spec.caveats ?? {})) {
    const field = `caveats["${actionId.slice(0, 128)}"]`;
    (caveats.constraints ?? []).forEach((schema, i) =>
      compiles(catalog, schema, `${field}.constraints_json[${i}]`),
    );
    (caveats.rules ?? []).forEach((rule, i) =>
      compiles(catalog, rule.when, `${field}.rules[${i}].when_json`),
    );
  }
}

function compiles(catalog: Catalog, schema: JsonSchema, field: string): void {
  try {
    catalog.schemas.compile(schema);
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw invalidRequest(field, `is not a usable JSON Schema: ${why.slice(0, 400)}`);
  }
}
