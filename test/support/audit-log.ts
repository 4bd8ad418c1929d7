import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import type { CliRun } from "./cli.js";

/**
 * The audit chain of the store in `dataDir` verifies (`charter audit verify`), and every decision
 * id a client received is one of its records (`charter audit export`). `cli` runs the charter
 * command against that store.
 */
export async function expectDecisionsLogged(
  cli: (...args: string[]) => Promise<CliRun>,
  dataDir: string,
  received: readonly string[],
): Promise<void> {
  const verify = await cli("audit", "verify");
  expect(verify.out).toMatch(/^audit log ok: /);
  expect(verify.code).toBe(0);
  const file = join(dataDir, "export.jsonl");
  expect((await cli("audit", "export", "--out", file)).code).toBe(0);
  const logged = new Set(
    readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((l) => (JSON.parse(l) as { entry: { decisionId?: string } }).entry.decisionId),
  );
  expect(received.filter((id) => !logged.has(id))).toEqual([]);
}
