import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FIXTURES } from "./charter-server.js";

/**
 * The demo policy without owner-assistant's call budget (maxCalls 300, maxCallsPerAction 60), for
 * tests that make thousands of calls under one grant and check something other than budgets
 * (fuzzing, backpressure): every valid call must still be allowed there. Budgets have their own tests.
 * A compiled benchmark passes the fixtures directory (this file's own URL is then under dist-bench/).
 */
export function unbudgetedPolicy(fixtures = FIXTURES): { readonly policy: string; remove(): void } {
  const text = readFileSync(join(fixtures, "policy.yaml"), "utf8");
  const without = text
    .replace("      maxCalls: 300\n", "")
    .replace("      maxCallsPerAction: 60\n", "");
  if (without.length === text.length)
    throw new Error("fixtures/policy.yaml: owner-assistant's budget lines not found");
  const dir = mkdtempSync(join(tmpdir(), "charter-policy-"));
  const policy = join(dir, "policy.yaml");
  writeFileSync(policy, without);
  return { policy, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
