import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { closedPort } from "../support/ports.js";

// The PostgreSQL tests must fail, not skip, in CI when the server is unreachable. Run the
// PostgreSQL contract file in a child vitest against a port nothing listens on.

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const VITEST = fileURLToPath(new URL("../../node_modules/vitest/vitest.mjs", import.meta.url));

async function runPostgresTests(env: Record<string, string>) {
  const base = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => k !== "CI" && k !== "CHARTER_REQUIRE_POSTGRES"),
  );
  const url = `postgres://postgres@127.0.0.1:${await closedPort()}/test`;
  const run = spawnSync(
    process.execPath,
    [VITEST, "run", "test/store/postgres.test.ts", "--reporter=default"],
    {
      cwd: ROOT,
      env: { ...base, CHARTER_TEST_DATABASE_URL: url, NO_COLOR: "1", ...env },
      encoding: "utf8",
      timeout: 60_000,
    },
  );
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

describe("PostgreSQL tests when the server is unreachable", () => {
  it.each([
    ["CI=true", { CI: "true" }],
    ["CHARTER_REQUIRE_POSTGRES=1", { CHARTER_REQUIRE_POSTGRES: "1" }],
  ])(
    "fail with %s, naming the reason",
    async (_what, env) => {
      const run = await runPostgresTests(env);
      expect(run.status, run.output).not.toBe(0);
      expect(run.output).toMatch(/PostgreSQL at 127\.0\.0\.1:\d+ is unreachable and required here/);
      expect(run.output).toMatch(/ECONNREFUSED/);
    },
    60_000,
  );

  it("skip with a visible message elsewhere", async () => {
    const run = await runPostgresTests({});
    expect(run.status, run.output).toBe(0);
    expect(run.output).toMatch(
      /SKIPPED "PostgreSQL store": PostgreSQL at 127\.0\.0\.1:\d+ is unreachable/,
    );
    expect(run.output).toMatch(/Tests +\d+ skipped/);
    expect(run.output).not.toMatch(/failed/);
  }, 60_000);
});
