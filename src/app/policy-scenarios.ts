import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  authorize,
  decideApproval,
  delegateGrant,
  isScenario,
  issueGrant,
  readRunAt,
  suiteDelegationSpec,
  suiteRequest,
  suiteProfiles,
  type ObservedCall,
  type ObservedScenario,
  type ScenarioObservations,
  type TestSuite,
} from "../authority/index.js";
import { DEFAULTS, type CharterConfig } from "../config/config.js";
import { createAppContext, type AppContext } from "./context.js";

type Scenario = Extract<NonNullable<TestSuite["cases"]>[number], { calls: unknown }>;

/**
 * Runs every multi-call scenario of the suites through the stateful pipeline, the one the server
 * runs: for each scenario and profile a fresh application context over a temporary data dir
 * (a new SQLite store, the configured catalog and policy, a clock set to each call's `now`), the
 * grant issued (and delegated) as IssueGrant and DelegateGrant would, each call authorized in
 * order with the run it is decided on read just before. The temporary dir is removed afterwards.
 * What each call got is judged by the pure runner (`runPolicyTests`).
 */
export async function observeScenarios(
  config: CharterConfig,
  suites: readonly TestSuite[],
): Promise<ScenarioObservations> {
  const observed = new Map<string, ObservedScenario>();
  for (const [i, suite] of suites.entries()) {
    if (suite.expect !== undefined) continue;
    for (const [k, c] of (suite.cases ?? []).entries()) {
      if (!isScenario(c)) continue;
      for (const profile of suiteProfiles(suite))
        observed.set(key(i, profile, k), await observe(config, suite, profile, c));
    }
  }
  return (suite, profile, kase) => observed.get(key(suite, profile, kase));
}

function key(suite: number, profile: string, kase: number): string {
  return JSON.stringify([suite, profile, kase]);
}

async function observe(
  config: CharterConfig,
  suite: TestSuite,
  profile: string,
  scenario: Scenario,
): Promise<ObservedScenario> {
  const dataDir = await mkdtemp(join(tmpdir(), "charter-test-"));
  const clock = { now: suite.now };
  let ctx: AppContext | undefined;
  try {
    ctx = await createAppContext(
      { ...DEFAULTS, dataDir, catalog: config.catalog, policy: config.policy },
      { now: () => clock.now, tokenCacheSize: 16, createStore: true, warn: () => undefined },
    );
    return { kind: "observed", calls: await runScenario(ctx, suite, profile, scenario, clock) };
  } catch (err) {
    return { kind: "failed", message: err instanceof Error ? err.message : String(err) };
  } finally {
    await ctx?.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

async function runScenario(
  ctx: AppContext,
  suite: TestSuite,
  profile: string,
  scenario: Scenario,
  clock: { now: number },
): Promise<ObservedCall[]> {
  const g = suite.grant;
  let issued = await issueGrant(ctx, suiteRequest(suite, profile));
  const { catalog } = ctx.policySet();
  if (g.delegate !== undefined) {
    const spec = suiteDelegationSpec(g.delegate, catalog);
    if (typeof spec === "string") throw new Error(spec);
    issued = await delegateGrant(ctx, { parentToken: issued.token, spec });
  }
  const out: ObservedCall[] = [];
  // The approval the latest held call got: what a later call's `approvedBy` approves and presents.
  let held: string | undefined;
  for (const [i, call] of scenario.calls.entries()) {
    clock.now = call.now ?? suite.now;
    const approvalId = call.approvedBy === undefined ? undefined : held;
    if (call.approvedBy !== undefined && approvalId === undefined)
      throw new Error(
        `call ${i + 1}: approvedBy, but no earlier call of the scenario was held for approval`,
      );
    for (const principal of call.approvedBy ?? [])
      await decideApproval(ctx, {
        approvalId: approvalId as string,
        outcome: "approve",
        decidedBy: principal,
        note: "charter test",
      });
    const runId = call.run ?? "main";
    const actionId = call.tool === undefined ? call.action : catalog.tools.get(call.tool)?.id;
    const read = await readRunAt(ctx, issued.grant, actionId, runId, clock.now);
    const decided = await authorize(ctx, {
      grantToken: issued.token,
      call: {
        callId: `call-${i + 1}`,
        toolName: call.tool ?? "",
        actionId: call.action ?? "",
        argumentsJson: JSON.stringify(call.args ?? {}),
        step: { runId, toolCallId: call.step ?? `call-${i + 1}` },
        ...(approvalId === undefined ? {} : { approvalId }),
      },
    });
    if (decided.verdict.decision === "require_approval") held = decided.verdict.approvalId;
    // A call in a run always has one to read (readRunAt answers undefined only outside a run).
    if (read === undefined) throw new Error(`run "${runId}" could not be read`);
    out.push({ verdict: decided.verdict, run: read.view });
  }
  return out;
}
