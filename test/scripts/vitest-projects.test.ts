import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { E2E_FILES } from "../../vitest.config.js";

// The e2e project is the list of test files that start processes: the unit project (the quick
// loop, `npm run test:unit`) stays in-process, and a new file that spawns is classified at once.

const ROOT = new URL("../../", import.meta.url).pathname;

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(path);
    return entry.name.endsWith(".test.ts") ? [relative(ROOT, path)] : [];
  });
}

/**
 * Whether a test file starts processes: it imports node:child_process, loads the built dist/,
 * runs `charter serve` through test/support/serve-process.ts or Chromium through
 * test/support/browser.ts.
 */
function startsProcesses(file: string): boolean {
  const text = readFileSync(join(ROOT, file), "utf8");
  return (
    /^import .* from "node:child_process";$/m.test(text) ||
    /\.\.\/dist\//.test(text) ||
    /from "\.\.\/support\/serve-process\.js";$/m.test(text) ||
    /from "\.\.\/support\/browser\.js";$/m.test(text)
  );
}

describe("the vitest projects", () => {
  it("put exactly the test files that start processes in e2e", () => {
    const spawning = testFiles(join(ROOT, "test")).filter(startsProcesses).sort();
    expect([...E2E_FILES].sort()).toEqual(spawning);
  });

  it("name only files that exist", () => {
    expect(E2E_FILES.filter((file) => !existsSync(join(ROOT, file)))).toEqual([]);
  });
});
