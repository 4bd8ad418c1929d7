import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

// Vitest global setup: the tests that run the built CLI or load dist/ in a child process find it
// built, whichever test file is run and however (`npx vitest run test/core` on a fresh clone
// included). Cheap when dist/ is up to date: a walk of src/ comparing modification times.

const ROOT = new URL("../../", import.meta.url).pathname;
/** The file whose age stands for the build's: tsc writes every output on each build. */
const STAMP = join(ROOT, "dist/cli/bin.js");
/** What the build reads besides src/. */
const INPUTS = ["tsconfig.json", "tsconfig.build.json", "package.json"];

/** The newest modification time under `dir` (directories too: a deleted file changes its folder). */
function newest(dir: string): number {
  let latest = statSync(dir).mtimeMs;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return latest;
}

/** Whether dist/ is missing or older than a source file or the build's configuration. */
export function distIsStale(): boolean {
  if (!existsSync(STAMP)) return true;
  const built = statSync(STAMP).mtimeMs;
  const inputs = Math.max(
    newest(join(ROOT, "src")),
    ...INPUTS.map((f) => statSync(join(ROOT, f)).mtimeMs),
  );
  return inputs > built;
}

/** Builds dist/ (`tsc -p tsconfig.build.json`, what `npm run build` runs) when it is stale. */
export function setup(): void {
  if (!distIsStale()) return;
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  const started = Date.now();
  try {
    execFileSync(process.execPath, [tsc, "-p", "tsconfig.build.json"], {
      cwd: ROOT,
      stdio: "pipe",
    });
  } catch (err) {
    // tsc still writes its output on a type error; the type check (npm run typecheck) reports it.
    const out = (err as { stdout?: Buffer }).stdout?.toString() ?? String(err);
    console.warn(`build of dist/ for the tests reported errors:\n${out}`);
    if (!existsSync(STAMP)) throw new Error("dist/ could not be built", { cause: err });
    return;
  }
  console.log(`built dist/ for the tests (tsc -p tsconfig.build.json, ${Date.now() - started} ms)`);
}
