import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAppContext } from "../../src/app/context.js";
import { pruneDecisionInputs } from "../../src/authority/index.js";
import { DEFAULTS } from "../../src/config/config.js";
import { ApprovalOutcome } from "../../src/gen/charter/v1/approval_pb.js";
import { Decision } from "../../src/gen/charter/v1/common_pb.js";
import { FIXTURES, startTestCharter, type TestCharter } from "../support/charter-server.js";
import { runCapture } from "../support/cli.js";

// `charter replay` against what a real server recorded: the demo served with its inputs retained,
// a few calls made over gRPC, then the log decided again offline under candidate policies.

const KEK = Buffer.alloc(32, 7).toString("base64");
const OWNER = "ana@example.com";
const refund = (amount: number) =>
  JSON.stringify({ order_id: "ord_A1B2C3", amount, currency: "EUR", reason: "damaged" });

let dir: string;
const DEMO_POLICY = readFileSync(join(FIXTURES, "policy.yaml"), "utf8");
const APPROVAL_RULE = "amount: { exclusiveMinimum: 100 }";

/** A copy of the demo policy with the refund approval threshold moved. */
function candidate(name: string, threshold?: number): string {
  const path = join(dir, `${name}.yaml`);
  const text =
    threshold === undefined
      ? DEMO_POLICY
      : DEMO_POLICY.replace(APPROVAL_RULE, `amount: { exclusiveMinimum: ${threshold} }`);
  if (threshold !== undefined) expect(text).not.toBe(DEMO_POLICY);
  writeFileSync(path, text);
  return path;
}

interface Made {
  readonly dataDir: string;
  readonly allowed40: string;
  readonly held250: string;
  readonly denied: string;
  readonly approvedEmail: string;
  readonly delegatedRead: string;
}

/** Serves the demo, makes the calls, stops with the data dir kept. */
async function record(config: Record<string, unknown>): Promise<Made> {
  const dataDir = mkdtempSync(join(dir, "data-"));
  const charter: TestCharter = await startTestCharter({ dataDir, config });
  try {
    const { grantToken } = await charter.clients.grants.issueGrant({
      profile: "owner-assistant",
      subject: "agent:worker-1",
      owner: OWNER,
      purpose: "replay test",
    });
    const ask = async (toolName: string, argumentsJson: string, approvalId?: string) => {
      const { verdict } = await charter.clients.authority.authorize({
        grantToken,
        call: { callId: `c-${toolName}`, toolName, argumentsJson },
        ...(approvalId === undefined ? {} : { approvalId }),
      });
      if (!verdict) throw new Error("no verdict");
      return verdict;
    };
    const allowed = await ask("issue_refund", refund(40));
    expect(allowed.decision).toBe(Decision.ALLOW);
    const held = await ask("issue_refund", refund(250));
    expect(held.decision).toBe(Decision.REQUIRE_APPROVAL);
    const denied = await ask("run_shell", JSON.stringify({ command: "ls" }));
    expect(denied.decision).toBe(Decision.DENY);
    // An external email: held for the owner, approved, then allowed with the approval it presents.
    const email = JSON.stringify({ to: "bob@elsewhere.org", subject: "Hi", body: "Hello" });
    const pending = await ask("send_email", email);
    expect(pending.decision).toBe(Decision.REQUIRE_APPROVAL);
    await charter.clients.approvals.decideApproval({
      approvalId: pending.approvalId,
      outcome: ApprovalOutcome.APPROVE,
      decidedBy: OWNER,
      note: "fine",
    });
    const sent = await ask("send_email", email, pending.approvalId);
    expect(sent.decision).toBe(Decision.ALLOW);
    // A sub-agent's call, under a grant delegated from this one.
    const child = await charter.clients.grants.delegateGrant({
      parentToken: grantToken,
      subject: "agent:reader",
      allowed: ["email.read"],
    });
    const { verdict: read } = await charter.clients.authority.authorize({
      grantToken: child.grantToken,
      call: {
        callId: "c-read",
        toolName: "read_email",
        argumentsJson: JSON.stringify({ message_id: "msg_7f3a9c21aa" }),
      },
    });
    expect(read?.decision).toBe(Decision.ALLOW);
    return {
      dataDir,
      allowed40: allowed.decisionId,
      held250: held.decisionId,
      denied: denied.decisionId,
      approvedEmail: sent.decisionId,
      delegatedRead: read?.decisionId ?? "",
    };
  } finally {
    await charter.stop({ keepData: true });
  }
}

const demo = (dataDir: string) => [
  "--data-dir",
  dataDir,
  "--catalog",
  join(FIXTURES, "catalog.yaml"),
  "--policy",
  join(FIXTURES, "policy.yaml"),
];

interface Report {
  replayed: number;
  unchanged: number;
  notReplayable: { count: number; why: Record<string, number> };
  matrix: Record<string, number>;
  flips: { from: string; to: string; count: number; decisionIds: string[]; because: string[] }[];
}

async function replay(
  dataDir: string,
  policy: string,
  extra: string[] = [],
  env: Record<string, string> = {},
) {
  const r = await runCapture(
    ["replay", ...demo(dataDir), "--candidate-policy", policy, "--json", ...extra],
    env,
  );
  return { ...r, report: r.code === 0 || r.code === 1 ? (JSON.parse(r.out) as Report) : undefined };
}

let kept: Made;
let bare: Made;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "charter-replay-"));
  kept = await record({ retainDecisionInputsDays: 30, kek: KEK });
  bare = await record({ retainDecisionInputsDays: 0 });
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("charter replay", () => {
  it("against the live policy itself: every decision replayed, zero flips", async () => {
    const r = await replay(kept.dataDir, candidate("same"), [], { CHARTER_KEK: KEK });
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(r.report).toMatchObject({ replayed: 6, unchanged: 6, flips: [] });
    expect(r.report?.notReplayable.count).toBe(0);
    // The approved email was replayed with the approval it presented: still an allow.
    expect(r.report?.matrix["allow -> allow"]).toBe(3);
  });

  it("a refund limit lowered below 40: exactly one flip, allow -> require_approval, naming that decision and rule", async () => {
    const r = await replay(kept.dataDir, candidate("lowered", 30), [], { CHARTER_KEK: KEK });
    expect(r.code).toBe(0);
    expect(r.report?.flips).toStrictEqual([
      {
        from: "allow",
        to: "require_approval",
        count: 1,
        decisionIds: [kept.allowed40],
        because: ["owner-assistant:refund.issue[1]"],
      },
    ]);
    expect(r.report?.unchanged).toBe(5);
  });

  it("a refund limit raised past 250 newly allows the held refund: listed first, and --fail-on-flip allow exits 1", async () => {
    const raised = candidate("raised", 300);
    const r = await replay(kept.dataDir, raised, ["--fail-on-flip", "allow"], {
      CHARTER_KEK: KEK,
    });
    expect(r.code).toBe(1);
    expect(r.report?.flips[0]).toMatchObject({
      from: "require_approval",
      to: "allow",
      decisionIds: [kept.held250],
    });
    // Without the gate the same replay exits 0.
    expect((await replay(kept.dataDir, raised, [], { CHARTER_KEK: KEK })).code).toBe(0);
  });

  it("a delegated grant is narrowed again as it was: its parent losing the action flips the child's call", async () => {
    const path = join(dir, "no-read.yaml");
    const from = "      - email.read\n      - email.search\n";
    expect(DEMO_POLICY).toContain(from);
    writeFileSync(path, DEMO_POLICY.replace(from, "      - email.search\n"));
    const r = await replay(kept.dataDir, path, [], { CHARTER_KEK: KEK });
    expect(r.code).toBe(0);
    expect(r.report?.flips).toStrictEqual([
      {
        from: "allow",
        to: "deny",
        count: 1,
        decisionIds: [kept.delegatedRead],
        because: ["ACTION_NOT_IN_PARENT"],
      },
    ]);
  });

  it("the shipped candidate (fixtures/candidates/refund-limit-30.yaml) is the demo policy with that one change", async () => {
    const shipped = readFileSync(join(FIXTURES, "candidates", "refund-limit-30.yaml"), "utf8");
    const body = (text: string) =>
      text
        .split("\n")
        .filter((l) => !l.startsWith("#") && !l.startsWith("version:"))
        .join("\n");
    expect(body(shipped)).toBe(
      body(DEMO_POLICY).replace(APPROVAL_RULE, "amount: { exclusiveMinimum: 30 }"),
    );
    const r = await replay(kept.dataDir, join(FIXTURES, "candidates", "refund-limit-30.yaml"), [], {
      CHARTER_KEK: KEK,
    });
    expect(r.report?.flips.map((f) => f.decisionIds)).toStrictEqual([[kept.allowed40]]);
  });

  it("prints a matrix and the flips as text, naming the decision", async () => {
    const r = await runCapture(
      ["replay", ...demo(kept.dataDir), "--candidate-policy", candidate("text", 30)],
      { CHARTER_KEK: KEK },
    );
    expect(r.code).toBe(0);
    expect(r.out).toContain("6 decisions replayed: 5 unchanged, 1 changed; 0 not replayable");
    expect(r.out).toContain("allow -> require_approval: 1, by owner-assistant:refund.issue[1]");
    expect(r.out).toContain(`    ${kept.allowed40}`);
  });

  it("keeps inputs sealed under the KEK: no argument in clear in the store, and none opened without it", async () => {
    const db = new Database(join(kept.dataDir, "charter.db"), { readonly: true });
    const rows = db.prepare("SELECT inputs FROM decision_inputs").all() as { inputs: string }[];
    db.close();
    expect(rows).toHaveLength(6);
    for (const { inputs } of rows) {
      expect(inputs).toMatch(/^\{"sealed":"A256GCM"/);
      expect(inputs).not.toContain("ord_A1B2C3");
    }
    const r = await runCapture([
      "replay",
      ...demo(kept.dataDir),
      "--candidate-policy",
      candidate("nokek"),
    ]);
    // The store's signing keys are sealed under the same KEK: without it nothing opens at all.
    expect(r.code).not.toBe(0);
    expect(r.err).toMatch(/key-encryption key \(kekFile or CHARTER_KEK\)/);
  });

  it("without retained inputs: replays what the candidate decides before the arguments, and counts the rest, never guessed", async () => {
    const r = await replay(bare.dataDir, candidate("bare", 30));
    expect(r.code).toBe(0);
    // run_shell is denied whatever its arguments; the refunds and emails depend on theirs.
    expect(r.report).toMatchObject({
      replayed: 1,
      unchanged: 1,
      notReplayable: { count: 5, why: { "no-inputs": 5 } },
      flips: [],
    });
  });

  it("--from/--to pick a range of the log; bad flags are usage errors", async () => {
    const whole = await replay(kept.dataDir, candidate("range"), [], { CHARTER_KEK: KEK });
    expect(whole.report?.replayed).toBe(6);
    const none = await replay(kept.dataDir, candidate("range"), ["--from", "100000"], {
      CHARTER_KEK: KEK,
    });
    expect(none.report?.replayed).toBe(0);
    for (const args of [
      [],
      ["--candidate-policy", "x.yaml", "--from", "-1"],
      ["--candidate-policy", "x.yaml", "--from", "5", "--to", "2"],
      ["--candidate-policy", "x.yaml", "--fail-on-flip", "deny"],
    ]) {
      const r = await runCapture(["replay", ...demo(kept.dataDir), ...args]);
      expect(r.code, args.join(" ")).toBe(64);
    }
  });

  it("a candidate that does not load exits 78 and opens nothing", async () => {
    const broken = join(dir, "broken.yaml");
    writeFileSync(broken, "profiles: [");
    const r = await runCapture([
      "replay",
      ...demo(join(dir, "no-such-data-dir")),
      "--candidate-policy",
      broken,
    ]);
    expect(r.code).toBe(78);
  });

  // Last: it deletes what the tests above replay.
  it("inputs are pruned past their retention: a setting of 0 keeps none of an earlier one's", async () => {
    const config = {
      ...DEFAULTS,
      dataDir: kept.dataDir,
      catalog: join(FIXTURES, "catalog.yaml"),
      policy: join(FIXTURES, "policy.yaml"),
      kek: KEK,
    };
    const still = await createAppContext({ ...config, retainDecisionInputsDays: 30 });
    try {
      expect(await pruneDecisionInputs(still)).toBe(0);
    } finally {
      await still.close();
    }
    const none = await createAppContext({ ...config, retainDecisionInputsDays: 0 });
    try {
      expect(await pruneDecisionInputs(none)).toBe(6);
    } finally {
      await none.close();
    }
    const r = await replay(kept.dataDir, candidate("pruned", 30), [], { CHARTER_KEK: KEK });
    expect(r.report).toMatchObject({ replayed: 1, notReplayable: { why: { "no-inputs": 5 } } });
  });
});
