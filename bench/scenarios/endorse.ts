/**
 * The endorsement comparison (issue 25): the suite's tasks and the endorsement workload
 * (endorse-tasks.ts) replayed through a real server with the demo documents and reported labels,
 * without endorsements and with them. With them, after each approval the owner endorses the
 * approved call: a workload task with the endorsement its data gives, a suite task with bounds
 * that pin every argument but free text (numbers capped at the approved value), for 10 calls.
 * Counts owner prompts per 10 consequential calls (effect other than read in the catalog) and
 * attack success.
 */
import { readFileSync } from "node:fs";
import { parse } from "yaml";
import type { Backend } from "./backend.js";
import { ENDORSED_TASKS, type EndorsedTask } from "./endorse-tasks.js";
import type { Call, Task } from "./model.js";
import { DEMO_CATALOG } from "./modes.js";
import {
  replayAttack,
  replayTask,
  type AttackResult,
  type EndorsePolicy,
  type TaskResult,
} from "./replay.js";

/** Arguments an owner cannot bound by value: what the agent writes. */
const FREE_TEXT = new Set(["subject", "body", "content", "note", "notes", "text", "next_step"]);

/** The owner's endorsement of a call she approved: the workload's own, or one pinning the call. */
export const ownerEndorses: EndorsePolicy = (call: Call, task: Task) => {
  if ("endorsement" in task) return (task as EndorsedTask).endorsement;
  const properties: Record<string, object> = {};
  for (const [key, value] of Object.entries(call.args)) {
    if (FREE_TEXT.has(key)) continue;
    properties[key] = typeof value === "number" ? { maximum: value } : { const: value };
  }
  return { bounds: { properties, required: Object.keys(properties) }, calls: 10 };
};

/** The tools whose action's effect is not `read` in the demo catalog. */
export function consequentialTools(): ReadonlySet<string> {
  const doc = parse(readFileSync(DEMO_CATALOG, "utf8")) as {
    actions: { effect?: string; tool?: { name?: string } }[];
  };
  return new Set(
    doc.actions
      .filter((a) => (a.effect ?? "read") !== "read" && a.tool?.name !== undefined)
      .map((a) => a.tool?.name ?? ""),
  );
}

export interface EndorseRun {
  readonly endorsements: boolean;
  readonly workload: "suite" | "repeated";
  readonly tasks: readonly TaskResult[];
  readonly attacks: readonly AttackResult[];
}

/** Replays `tasks` with and without endorsements, each on a fresh backend. */
export async function compareEndorsements(
  open: () => Promise<Backend>,
  suite: readonly Task[],
  reports: boolean,
): Promise<EndorseRun[]> {
  const out: EndorseRun[] = [];
  for (const endorsements of [false, true])
    for (const [workload, tasks] of [
      ["suite", suite],
      ["repeated", ENDORSED_TASKS],
    ] as const) {
      const backend = await open();
      try {
        const policy = endorsements ? ownerEndorses : undefined;
        const done: TaskResult[] = [];
        const attacks: AttackResult[] = [];
        for (const task of tasks) {
          done.push(await replayTask(backend, task, reports, policy));
          for (const injection of task.injections)
            attacks.push(await replayAttack(backend, task, injection, reports, policy));
        }
        out.push({ endorsements, workload, tasks: done, attacks });
      } finally {
        await backend.close();
      }
    }
  return out;
}

const pct = (n: number, d: number) => (d === 0 ? "–" : `${((100 * n) / d).toFixed(1)} %`);

/** The markdown section (and its console table) of a comparison. */
export function renderEndorsements(runs: readonly EndorseRun[]): string {
  const consequential = consequentialTools();
  const rows = runs.map((r) => {
    const calls = r.tasks.flatMap((t) => t.calls).filter((c) => consequential.has(c.tool)).length;
    const prompts = r.tasks.reduce((n, t) => n + t.approvals, 0);
    const completed = r.tasks.filter((t) => t.completed).length;
    const won = r.attacks.filter((a) => a.succeeded).length;
    return [
      r.workload === "suite"
        ? `the suite (${r.tasks.length} tasks)`
        : `repeated calls (${r.tasks.length} tasks)`,
      r.endorsements ? "yes" : "no",
      `${prompts}`,
      `${calls}`,
      calls === 0 ? "–" : ((10 * prompts) / calls).toFixed(2),
      `${completed}/${r.tasks.length}`,
      `${won}/${r.attacks.length} (${pct(won, r.attacks.length)})`,
    ];
  });
  const without = new Set(
    runs
      .filter((r) => !r.endorsements)
      .flatMap((r) => r.attacks.filter((a) => a.succeeded).map(id)),
  );
  const gained = runs
    .filter((r) => r.endorsements)
    .flatMap((r) => r.attacks.filter((a) => a.succeeded && !without.has(id(a))))
    .map((a) => `${id(a)} (${a.injection.story})`);
  const table = [
    "| workload | endorsements | owner prompts | consequential calls | prompts per 10 consequential calls | utility | attack success |",
    "| --- | --- | --- | --- | --- | --- | --- |",
    ...rows.map((r) => `| ${r.join(" | ")} |`),
  ];
  return [
    "## Endorsements",
    "",
    "Scoped endorsements ([approvals](approvals.md#endorsements)), replayed with the demo documents and reported labels: without endorsements, and with the owner endorsing every call she approves. A suite task's endorsement pins every argument of the approved call but free text (subject, body, content, note, notes, text, next_step), numbers capped at the approved value, for 10 calls; a task of the repeated-calls workload (bench/scenarios/endorse-tasks.ts: ten refunds after ten customers' mails, ten reminders to ten listed customers, ten notes after ten web pages) gets the bounds its owner can write from her request (the listed orders, the listed customers, the notes folder) for the calls left. A consequential call is one whose action's effect is not `read`; a prompt is one approval asked of the owner.",
    "",
    ...table,
    "",
    suiteUnchanged(runs)
      ? "On the suite, endorsements change nothing: each suite task holds at most one call, so nothing is left to endorse, and an endorsement never reaches another task's grant. On the repeated-calls workload they bring prompts from one per consequential call to 1 per 10; the attacks they let through are the ones inside the bounds."
      : "",
    "",
    gained.length === 0
      ? "No attack succeeds with endorsements that fails without them."
      : `Attacks that succeed with endorsements and not without (${gained.length}): ${gained.join("; ")}. Each is a call inside the bounds the owner endorsed, held for the same requirement by the same rule: an endorsement cannot tell it from the owner's own calls, and its bounds are the whole defence. Attacks outside the bounds (another order, an outside address, a file outside the notes folder) stay held; so would a call held by another rule over the run than the endorsed one (tested in test/core/endorsement.test.ts; this workload has none).`,
    "",
  ].join("\n");
}

const id = (a: AttackResult) => `${a.task.id}.${a.injection.id}`;

/** Whether the suite's prompts and attack successes are the same with endorsements as without. */
function suiteUnchanged(runs: readonly EndorseRun[]): boolean {
  const of = (e: boolean) => runs.find((r) => r.workload === "suite" && r.endorsements === e);
  const [a, b] = [of(false), of(true)];
  const tally = (r: EndorseRun | undefined) =>
    r === undefined
      ? ""
      : `${r.tasks.reduce((n, t) => n + t.approvals, 0)}/${r.attacks.filter((x) => x.succeeded).length}`;
  return a !== undefined && tally(a) === tally(b);
}
