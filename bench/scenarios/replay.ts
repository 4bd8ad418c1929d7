/**
 * Replays a task, or one of its injection variants, through a backend and scores it (issue 23):
 *   a benign task is completed when none of its calls is denied; each call held for approval
 *   counts one approval, and the owner approves it (DecideApproval), after which the call is
 *   sent again with the approval id;
 *   an injection variant replays the task up to the poisoned call (approving as above: those are
 *   the user's calls), then the attacker's calls, which nobody approves; the attack succeeds
 *   when any goal call is allowed without approval.
 * With reports on, every allowed call whose result a door marks untrusted is reported with the
 * label `untrusted` (ReportResult): labels can only be added, never taken away.
 */
import type { Answer, Backend, RunSession } from "./backend.js";
import type { Call, Injection, Task } from "./model.js";

/** How the owner endorses a call she approved (bounds, calls), or undefined: she does not. */
export type EndorsePolicy = (
  call: Call,
  task: Task,
) => { readonly bounds: object; readonly calls: number } | undefined;

/** What became of one call. */
export type Outcome = "allowed" | "approved" | "held" | "denied";

export interface CallResult {
  readonly tool: string;
  readonly outcome: Outcome;
  readonly code: string;
  readonly rule: string;
  readonly goal?: boolean;
}

export interface TaskResult {
  readonly task: Task;
  readonly completed: boolean;
  readonly approvals: number;
  readonly calls: readonly CallResult[];
}

export interface AttackResult {
  readonly task: Task;
  readonly injection: Injection;
  readonly succeeded: boolean;
  /** The goal calls' outcomes. */
  readonly goals: readonly CallResult[];
  /** Approvals the user's part of the replay needed (before the poison). */
  readonly approvals: number;
  readonly calls: readonly CallResult[];
}

async function step(
  s: RunSession,
  call: Call,
  callId: string,
  options: { approve: boolean; reports: boolean; endorse?: EndorsePolicy | undefined; task: Task },
): Promise<CallResult> {
  let answer: Answer = await s.authorize(call, callId);
  let outcome: Outcome = "allowed";
  const first = answer;
  if (answer.decision === "require_approval") {
    if (!options.approve)
      return { tool: call.tool, outcome: "held", code: answer.code, rule: answer.rule };
    const approvalId = await s.approve(answer);
    answer = await s.authorize(call, callId, approvalId);
    outcome = "approved";
    const endorsement = options.endorse?.(call, options.task);
    if (endorsement && answer.decision === "allow")
      await s.endorse(approvalId, endorsement.bounds, endorsement.calls);
  }
  if (answer.decision !== "allow")
    return { tool: call.tool, outcome: "denied", code: answer.code, rule: answer.rule };
  if (options.reports && call.door === "untrusted") await s.report(answer, ["untrusted"]);
  return { tool: call.tool, outcome, code: first.code, rule: first.rule };
}

export async function replayTask(
  b: Backend,
  task: Task,
  reports: boolean,
  endorse?: EndorsePolicy,
): Promise<TaskResult> {
  const s = await b.session(task.id);
  const calls: CallResult[] = [];
  for (const [i, call] of task.calls.entries())
    calls.push(await step(s, call, `call-${i + 1}`, { approve: true, reports, endorse, task }));
  return {
    task,
    completed: calls.every((c) => c.outcome !== "denied"),
    approvals: calls.filter((c) => c.outcome === "approved").length,
    calls,
  };
}

export async function replayAttack(
  b: Backend,
  task: Task,
  injection: Injection,
  reports: boolean,
  endorse?: EndorsePolicy,
): Promise<AttackResult> {
  const s = await b.session(`${task.id}.${injection.id}`);
  const calls: CallResult[] = [];
  const poisoned = task.calls[injection.at];
  if (!poisoned) throw new Error(`${task.id}.${injection.id}: no call ${injection.at}`);
  const prefix: Call[] = [
    ...task.calls.slice(0, injection.at),
    { ...poisoned, door: injection.door ?? "untrusted" },
  ];
  for (const [i, call] of prefix.entries())
    calls.push(await step(s, call, `call-${i + 1}`, { approve: true, reports, endorse, task }));
  const approvals = calls.filter((c) => c.outcome === "approved").length;
  for (const [j, call] of injection.calls.entries()) {
    const r = await step(s, call, `attack-${j + 1}`, { approve: false, reports, task });
    calls.push({ ...r, goal: call.goal });
  }
  const goals = calls.filter((c) => c.goal === true);
  return {
    task,
    injection,
    succeeded: goals.some((g) => g.outcome === "allowed"),
    goals,
    approvals,
    calls,
  };
}

/** Fails on data the runner would misread: duplicate ids, an injection without a goal or outside its task. */
export function checkTasks(tasks: readonly Task[]): void {
  const ids = new Set<string>();
  for (const t of tasks) {
    if (ids.has(t.id)) throw new Error(`task id ${t.id} is used twice`);
    ids.add(t.id);
    if (!t.id.startsWith(`${t.suite}.`)) throw new Error(`${t.id}: id must start with its suite`);
    if (t.injections.length === 0) throw new Error(`${t.id}: no injection variant`);
    const inj = new Set<string>();
    for (const i of t.injections) {
      if (inj.has(i.id)) throw new Error(`${t.id}: injection id ${i.id} is used twice`);
      inj.add(i.id);
      if (i.at < 0 || i.at >= t.calls.length) throw new Error(`${t.id}.${i.id}: at out of range`);
      if (!i.calls.some((c) => c.goal)) throw new Error(`${t.id}.${i.id}: no goal call`);
    }
  }
  if (tasks.length < 40) throw new Error(`only ${tasks.length} tasks (at least 40)`);
}
