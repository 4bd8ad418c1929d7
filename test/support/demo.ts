import { readFileSync } from "node:fs";
import {
  buildCatalog,
  buildPolicy,
  compose,
  projectCatalog,
  type Catalog,
  type CatalogView,
  type Policy,
  type TaskGrant,
} from "../../src/core/index.js";
import { parseDocumentText } from "../../src/load/documents.js";

const FIXTURES = new URL("../../fixtures/", import.meta.url).pathname;

/** The demo catalog and policy (fixtures/catalog.yaml, fixtures/policy.yaml). */
export function demoPair(): { catalog: Catalog; policy: Policy } {
  return fixturePair("");
}

/** The catalog.yaml and policy.yaml of a fixtures folder (`""`: the demo's; `run-rules/`…). */
export function fixturePair(dir: string): { catalog: Catalog; policy: Policy } {
  const catalog = buildCatalog(
    parseDocumentText(readFileSync(`${FIXTURES}${dir}catalog.yaml`, "utf8"), "catalog.yaml"),
    "catalog.yaml",
  );
  const policy = buildPolicy(
    parseDocumentText(readFileSync(`${FIXTURES}${dir}policy.yaml`, "utf8"), "policy.yaml"),
    catalog,
    "policy.yaml",
  );
  return { catalog, policy };
}

/** The demo profiles that compose. */
export const DEMO_PROFILES = [
  "owner-assistant",
  "owner-assistant-dryrun",
  "receptionist",
  "email-drafter",
] as const;

/** A grant of a demo profile, composed at `now` (Unix seconds). */
export function demoGrant(profile: string, now = 1_700_000_000): TaskGrant {
  const { catalog, policy } = demoPair();
  const result = compose(
    { profile, subject: "agent-1", owner: "ana", purpose: "demo" },
    policy,
    catalog,
    now,
    `grt_${profile}`,
  );
  if (result.kind !== "granted")
    throw new Error(`profile ${profile} does not compose: ${JSON.stringify(result)}`);
  return result.grant;
}

/** The catalog view of a demo profile's grant. */
export function demoView(profile: string): CatalogView {
  return projectCatalog(demoGrant(profile), demoPair().catalog);
}
