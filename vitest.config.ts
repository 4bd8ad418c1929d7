import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

/**
 * The end-to-end files: those that start processes (the built CLI, `charter serve`, its workers,
 * node children on dist/, Python, buf, git, a child vitest). Everything else is the unit project:
 * in-process, the developer's loop (`npm run test:unit`). `npm test` and CI run both.
 * test/scripts/vitest-projects.test.ts fails when a file that starts processes is missing here.
 */
export const E2E_FILES = [
  "test/cli/config-command.test.ts",
  "test/cli/crash-audit.test.ts",
  "test/cli/help.test.ts",
  "test/cli/policy-diff-cli.test.ts",
  "test/cli/policy-test-changed.test.ts",
  "test/cli/serve-process.test.ts",
  "test/cli/serve-workers.test.ts",
  "test/cli/serve-workers-webhooks.test.ts",
  "test/contract/buf-breaking.test.ts",
  "test/core/schema-generations.test.ts",
  "test/gateway/mcp-gateway.test.ts",
  "test/hostile/doors-differential.test.ts",
  "test/hostile/pattern-time.test.ts",
  "test/hostile/token-cache-memory.test.ts",
  "test/inbox/inbox-browser.test.ts",
  "test/polyglot/python-client.test.ts",
  "test/scripts/check-commit-subjects.test.ts",
  "test/security/data-dir.test.ts",
  "test/security/store-identity.test.ts",
  "test/server/buf-curl.test.ts",
  "test/server/shutdown.test.ts",
  "test/store/postgres-required.test.ts",
  "test/store/revocation-batch.test.ts",
  "test/store/revocation-epoch.test.ts",
  "test/store/wal-checkpoint.test.ts",
];

export default defineConfig({
  test: {
    // Builds dist/ when it is missing or older than src/, so any one file runs after `npm ci`.
    globalSetup: ["test/support/build-dist.ts"],
    // Vitest's default is one file at a time on two cores (cores - 1). Much of a file's time is
    // spent waiting on child processes, sockets and timers, so two at once keep both cores busy.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    testTimeout: 20_000,
    hookTimeout: 60_000,
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: ["test/**/*.test.ts"],
          exclude: E2E_FILES,
          // `npm run bench` (vitest bench) runs the benchmarks once, here.
          benchmark: { include: ["bench/**/*.bench.ts"] },
        },
      },
      { extends: true, test: { name: "e2e", include: E2E_FILES, benchmark: { include: [] } } },
    ],
  },
});
