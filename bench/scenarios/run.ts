/**
 * The agent-security scenario suite (issue 23), replayed through a real Charter server with run
 * ids: every benign task and every injection variant of bench/scenarios/tasks.ts, in each mode
 * of bench/scenarios/modes.ts (one server per mode, port 0, temp data dir, the demo catalog and
 * the mode's policy), an owner-assistant grant per replay and a fresh run id per replay. Prints a
 * table per suite and overall, and writes docs/scenarios.md.
 *
 *   npm run bench:scenarios              the real server (gRPC, generated client)
 *   npm run bench:scenarios -- --core    the pure core in process, with a run view kept here
 *   npm run bench:scenarios -- --check   do not write docs/scenarios.md; fail if it differs
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { coreBackend, serverBackend, type Backend } from "./backend.js";
import { compareEndorsements, renderEndorsements } from "./endorse.js";
import { DEMO_CATALOG, DEMO_POLICY, demoHasProposedRule, MODES, ROOT, type Mode } from "./modes.js";
import { SUITES, type Suite } from "./model.js";
import { render, type ModeResult } from "./report.js";
import { checkTasks, replayAttack, replayTask } from "./replay.js";
import { TASKS } from "./tasks.js";

const args = process.argv.slice(2);
const CORE = args.includes("--core");
const CHECK = args.includes("--check");
const DOC = join(ROOT, "docs", "scenarios.md");

async function runMode(mode: Mode, dir: string): Promise<ModeResult> {
  const catalog = mode.catalog(dir);
  const policy = mode.policy(dir);
  const backend: Backend = CORE
    ? coreBackend(catalog, policy)
    : await serverBackend(catalog, policy);
  try {
    const tasks = [];
    const attacks = [];
    for (const task of TASKS) {
      tasks.push(await replayTask(backend, task, mode.reports));
      for (const injection of task.injections)
        attacks.push(await replayAttack(backend, task, injection, mode.reports));
    }
    return { mode, tasks, attacks };
  } finally {
    await backend.close();
  }
}

checkTasks(TASKS);
const dir = mkdtempSync(join(tmpdir(), "charter-scenarios-docs-"));
const started = Date.now();
const results: ModeResult[] = [];
let endorsements = "";
try {
  // Once fixtures/policy.yaml has the proposed rule, the proposed mode is the demo's own.
  const adopted = demoHasProposedRule();
  for (const mode of MODES)
    if (!(adopted && mode.id === "proposed")) results.push(await runMode(mode, dir));
  // Endorsements need the server's store: the core backend has none.
  if (!CORE)
    endorsements = renderEndorsements(
      await compareEndorsements(() => serverBackend(DEMO_CATALOG, DEMO_POLICY), TASKS, true),
    );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
const rendered = render(results, {
  backend: CORE ? "core" : "server",
  suites: SUITES as Suite[],
});
const text = endorsements === "" ? rendered.console : `${rendered.console}\n${endorsements}`;
const markdown =
  endorsements === "" ? rendered.markdown : `${rendered.markdown.trimEnd()}\n\n${endorsements}`;
console.log(text);
console.log(`(${((Date.now() - started) / 1000).toFixed(1)} s)`);
if (CHECK) {
  const current = readFileSync(DOC, "utf8");
  if (current !== markdown) {
    console.error("docs/scenarios.md is out of date: run npm run bench:scenarios");
    process.exitCode = 1;
  }
} else {
  writeFileSync(DOC, markdown);
  console.log("wrote docs/scenarios.md");
}
