import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApprovalOutcome } from "../../src/gen/charter/v1/approval_pb.js";
import { ResultOutcome } from "../../src/gen/charter/v1/authority_pb.js";
import { Decision, Dialect, ToolStatus, type Verdict } from "../../src/gen/charter/v1/common_pb.js";
import { verifyReceipt, type Jwks } from "../../src/token/index.js";
import { FIXTURES, startTestCharter, type TestCharter } from "../support/charter-server.js";
import { describePostgres, testSchema } from "../support/postgres.js";

// Run-aware authority over real gRPC (docs/runs.md): what a run has read and done decides what it
// may do next. The demo's owner-assistant has the Rule of Two; fixtures/run-rules caps refunds.
let charter: TestCharter;
let runs: TestCharter;
beforeAll(async () => {
  [charter, runs] = await Promise.all([
    startTestCharter(),
    startTestCharter({
      config: {
        catalog: join(FIXTURES, "run-rules/catalog.yaml"),
        policy: join(FIXTURES, "run-rules/policy.yaml"),
      },
    }),
  ]);
});
afterAll(() => Promise.all([charter.stop(), runs.stop()]));

const OWNER = "ana@example.com";
let seq = 0;
const fresh = (what: string) => `${what}-${++seq}`;

async function issue(via: TestCharter, profile = "owner-assistant") {
  const res = await via.clients.grants.issueGrant({
    profile,
    subject: "agent:runs",
    owner: OWNER,
    purpose: "runs",
  });
  if (!res.grant) throw new Error("no grant");
  return { token: res.grantToken, id: res.grant.id };
}

async function call(
  token: string,
  run: string,
  toolName: string,
  args: unknown,
  options: { approvalId?: string; via?: TestCharter } = {},
): Promise<Verdict> {
  const callId = fresh("c");
  const { verdict } = await (options.via ?? charter).clients.authority.authorize({
    grantToken: token,
    call: {
      callId,
      toolName,
      argumentsJson: JSON.stringify(args),
      ...(run === "" ? {} : { step: { runId: run, of: { case: "toolCallId", value: callId } } }),
    },
    ...(options.approvalId === undefined ? {} : { approvalId: options.approvalId }),
  });
  if (!verdict) throw new Error("no verdict");
  return verdict;
}

const FETCH = { url: "https://news.example.org/today" };
const READ = { message_id: "msg_7f3a9c21" };
const SEND = { to: "bo@example.com", subject: "Notes", body: "The notes, as promised." };
const LOOKUP = { query: "Bo" };

describe("the Rule of Two in one run (the README walkthrough)", () => {
  it("holds internal mail after untrusted content and private data, naming both and the calls", async () => {
    const { token } = await issue(charter);
    const run = fresh("run");
    const fetched = await call(token, run, "fetch_url", FETCH);
    expect(fetched).toMatchObject({ decision: Decision.ALLOW, runLabels: [] });
    const read = await call(token, run, "read_email", READ);
    expect(read).toMatchObject({ decision: Decision.ALLOW, runLabels: ["untrusted"] });
    const sent = await call(token, run, "send_email", SEND);
    expect(sent).toMatchObject({
      decision: Decision.REQUIRE_APPROVAL,
      requirement: "owner",
      rule: "owner-assistant.rule-of-two",
      runLabels: ["private", "untrusted"],
      reason: {
        code: "RUN_RULE",
        message:
          'This run has read untrusted content (fetch_url, call 1) and private data (read_email, call 2); "send_email" now needs the owner\'s approval.',
      },
    });
    expect(sent.approvalId).not.toBe("");
    // The owner approves that one call: it goes through, bound to its arguments.
    await charter.clients.approvals.decideApproval({
      approvalId: sent.approvalId,
      outcome: ApprovalOutcome.APPROVE,
      decidedBy: OWNER,
    });
    const other = await call(
      token,
      run,
      "send_email",
      { ...SEND, to: "cy@example.com" },
      { approvalId: sent.approvalId },
    );
    expect(other.reason?.code).toBe("APPROVAL_MISMATCH");
    const approved = await call(token, run, "send_email", SEND, { approvalId: sent.approvalId });
    expect(approved).toMatchObject({
      decision: Decision.ALLOW,
      rule: "owner-assistant.rule-of-two",
    });
  });

  it("sends internal mail freely after a contact lookup (private, not untrusted)", async () => {
    const { token } = await issue(charter);
    const run = fresh("run");
    expect((await call(token, run, "lookup_contact", LOOKUP)).decision).toBe(Decision.ALLOW);
    const sent = await call(token, run, "send_email", SEND);
    expect(sent).toMatchObject({ decision: Decision.ALLOW, runLabels: ["private"] });
    // The receipt carries the run and the labels it was decided on.
    const { jwksJson } = await charter.clients.keys.getJwks({});
    const checked = await verifyReceipt(sent.receipt, JSON.parse(jwksJson) as Jwks, {
      issuer: charter.config.issuer,
      audience: charter.config.audience,
      now: Math.floor(Date.now() / 1000),
    });
    expect(checked.ok && checked.receipt).toMatchObject({ runId: run, runLabels: ["private"] });
    const record = await charter.server.context.store.getDecision(sent.decisionId);
    expect(record).toMatchObject({ runId: run, runLabels: ["private"] });
  });

  it("judges calls without a run as before, and keeps runs of one grant apart", async () => {
    const { token } = await issue(charter);
    for (const [tool, args] of [
      ["fetch_url", FETCH],
      ["read_email", READ],
      ["send_email", SEND],
    ] as const)
      expect((await call(token, "", tool, args)).decision).toBe(Decision.ALLOW);
    const a = fresh("run");
    await call(token, a, "fetch_url", FETCH);
    const b = fresh("run");
    await call(token, b, "read_email", READ);
    expect((await call(token, a, "send_email", SEND)).runLabels).toEqual(["untrusted"]);
    // read_email brings untrusted as well as private: b alone holds the third call.
    expect((await call(token, b, "send_email", SEND)).decision).toBe(Decision.REQUIRE_APPROVAL);
  });

  it("does not taint a run with a fetch of the intranet (a conditional label)", async () => {
    const { token } = await issue(charter);
    const run = fresh("run");
    await call(token, run, "fetch_url", { url: "https://intranet.example.com/wiki/notes" });
    await call(token, run, "lookup_contact", LOOKUP);
    expect(await call(token, run, "send_email", SEND)).toMatchObject({
      decision: Decision.ALLOW,
      runLabels: ["private"],
    });
  });

  it("renders the catalog as it stands for the run (GetCatalog with a run id)", async () => {
    const { token } = await issue(charter);
    const run = fresh("run");
    const statusOf = async (name: string, runId: string) => {
      const { view } = await charter.clients.catalog.getCatalog({
        grantToken: token,
        dialect: Dialect.NEUTRAL,
        runId,
      });
      return view?.tools.find((t) => t.name === name)?.status;
    };
    expect(await statusOf("send_email", run)).toBe(ToolStatus.CALLABLE);
    await call(token, run, "fetch_url", FETCH);
    await call(token, run, "read_email", READ);
    expect(await statusOf("send_email", run)).toBe(ToolStatus.REQUIRES_APPROVAL);
    expect(await statusOf("update_contact", run)).toBe(ToolStatus.REQUIRES_APPROVAL);
    expect(await statusOf("send_email", "")).toBe(ToolStatus.CALLABLE);
  });
});

describe("every door decides in the run", () => {
  it("BatchAuthorize decides a run's calls in call order", async () => {
    const { token } = await issue(charter);
    const run = fresh("run");
    const item = (toolName: string, args: unknown) => {
      const callId = fresh("b");
      return {
        call: {
          callId,
          toolName,
          argumentsJson: JSON.stringify(args),
          step: { runId: run, of: { case: "toolCallId" as const, value: callId } },
        },
      };
    };
    const { verdicts } = await charter.clients.authority.batchAuthorize({
      grantToken: token,
      items: [item("fetch_url", FETCH), item("read_email", READ), item("send_email", SEND)],
    });
    expect(verdicts.map((v) => v.decision)).toEqual([
      Decision.ALLOW,
      Decision.ALLOW,
      Decision.REQUIRE_APPROVAL,
    ]);
  });

  it("AuthorizeTurn decides a turn's calls in the run named by the request", async () => {
    const { token } = await issue(charter);
    const turn = {
      role: "assistant",
      content: null,
      tool_calls: [
        ["t1", "fetch_url", FETCH],
        ["t2", "read_email", READ],
        ["t3", "send_email", SEND],
      ].map(([id, name, args]) => ({
        id,
        type: "function",
        function: { name, arguments: JSON.stringify(args) },
      })),
    };
    const res = await charter.clients.authority.authorizeTurn({
      grantToken: token,
      dialect: Dialect.OPENAI_CHAT,
      turnJson: JSON.stringify(turn),
      runId: fresh("run"),
    });
    expect(res.verdicts.map((v) => v.decision)).toEqual([
      Decision.ALLOW,
      Decision.ALLOW,
      Decision.REQUIRE_APPROVAL,
    ]);
    expect(res.verdicts[2]?.reason?.code).toBe("RUN_RULE");
  });
});

describe("labels flow along the delegation tree", () => {
  async function child(parentToken: string, runId: string) {
    const res = await charter.clients.grants.delegateGrant({
      parentToken,
      subject: "agent:child",
      allowed: ["email.read", "email.send", "web.fetch", "contact.lookup"],
      runId,
    });
    return res.grantToken;
  }

  it("a sub-agent's run starts with its parent run's labels", async () => {
    const { token } = await issue(charter);
    const parentRun = fresh("run");
    await call(token, parentRun, "fetch_url", FETCH);
    const sub = await child(token, parentRun);
    const subRun = fresh("sub");
    await call(sub, subRun, "lookup_contact", LOOKUP);
    expect(await call(sub, subRun, "send_email", SEND)).toMatchObject({
      decision: Decision.REQUIRE_APPROVAL,
      runLabels: ["private", "untrusted"],
    });
  });

  it("what a sub-agent sees joins its parent's run: it cannot launder untrusted content", async () => {
    const { token } = await issue(charter);
    const parentRun = fresh("run");
    await call(token, parentRun, "lookup_contact", LOOKUP);
    const sub = await child(token, parentRun);
    await call(sub, fresh("sub"), "fetch_url", FETCH);
    expect(await call(token, parentRun, "send_email", SEND)).toMatchObject({
      decision: Decision.REQUIRE_APPROVAL,
      runLabels: ["private", "untrusted"],
    });
  });

  it("a sub-agent delegated without a run is bound to every run of its parent, both ways", async () => {
    const { token } = await issue(charter);
    const parentRun = fresh("run");
    await call(token, parentRun, "fetch_url", FETCH);
    const sub = await child(token, "");
    const subRun = fresh("sub");
    await call(sub, subRun, "lookup_contact", LOOKUP);
    expect((await call(sub, subRun, "send_email", SEND)).decision).toBe(Decision.REQUIRE_APPROVAL);
    // A fresh task: the child of the first one sees every run of its parent, untrusted included,
    // so its own fetch would be held (a fetch counts as sending out) and bring nothing in.
    const second = await issue(charter);
    const other = fresh("run");
    await call(second.token, other, "lookup_contact", LOOKUP);
    const sub2 = await child(second.token, "");
    expect((await call(sub2, fresh("sub"), "fetch_url", FETCH)).decision).toBe(Decision.ALLOW);
    expect(await call(second.token, other, "send_email", SEND)).toMatchObject({
      decision: Decision.REQUIRE_APPROVAL,
      runLabels: ["private", "untrusted"],
    });
  });
});

describe("ReportResult", () => {
  it("adds the labels a door saw in a result; a label the catalog lacks is refused", async () => {
    const { token } = await issue(charter);
    const run = fresh("run");
    const looked = await call(token, run, "lookup_contact", LOOKUP);
    const res = await charter.clients.authority.reportResult({
      grantToken: token,
      runId: run,
      decisionId: looked.decisionId,
      outcome: ResultOutcome.SUCCEEDED,
      labels: ["untrusted"],
    });
    expect(res.addedLabels).toEqual(["untrusted"]);
    expect((await call(token, run, "send_email", SEND)).decision).toBe(Decision.REQUIRE_APPROVAL);
    await expect(
      charter.clients.authority.reportResult({
        grantToken: token,
        runId: run,
        decisionId: looked.decisionId,
        outcome: ResultOutcome.SUCCEEDED,
        labels: ["tainted"],
      }),
    ).rejects.toMatchObject({ code: 3 });
    await expect(
      charter.clients.authority.reportResult({
        grantToken: token,
        runId: fresh("other-run"),
        decisionId: looked.decisionId,
        outcome: ResultOutcome.SUCCEEDED,
        labels: [],
      }),
    ).rejects.toMatchObject({ code: 5 });
    await expect(
      charter.clients.authority.reportResult({
        grantToken: token,
        runId: run,
        decisionId: looked.decisionId,
        outcome: ResultOutcome.UNSPECIFIED,
        labels: [],
      }),
    ).rejects.toMatchObject({ code: 3 });
  });
});

describe("labels from results (ReportResult with result_json)", () => {
  const report = (token: string, run: string, decisionId: string, result: unknown, via = charter) =>
    via.clients.authority.reportResult({
      grantToken: token,
      runId: run,
      decisionId,
      outcome: ResultOutcome.SUCCEEDED,
      resultJson: JSON.stringify(result),
    });
  const MAIL = (from: string) => ({
    message_id: "msg_7f3a9c21",
    from,
    to: [OWNER],
    subject: "Q3",
    date: "2026-12-01T09:00:00Z",
    body: "Numbers attached.",
  });

  // fixtures/run-rules: customer mail is untrusted unless a reported message is from example.com.
  const READ_CUSTOMER = { message_id: "msg_ABC123" };
  const LOOK = { order_id: "ord_ABC123" };
  const support = () => issue(runs, "support-agent");
  const labelsNow = async (token: string, run: string) =>
    (await call(token, run, "lookup_order", LOOK, { via: runs })).runLabels;

  it("mail from inside the organisation, reported before the run's next decision, is not untrusted", async () => {
    const { token } = await support();
    const run = fresh("run");
    const read = await call(token, run, "read_customer_email", READ_CUSTOMER, { via: runs });
    const res = await report(token, run, read.decisionId, MAIL("bo@example.com"), runs);
    expect(res.narrowedLabels).toEqual(["untrusted"]);
    expect(await labelsNow(token, run)).toEqual(["private"]);
  });

  it("mail from outside stays untrusted; a report after a later decision narrows nothing", async () => {
    const { token } = await support();
    const outside = fresh("run");
    const read = await call(token, outside, "read_customer_email", READ_CUSTOMER, { via: runs });
    expect(
      (await report(token, outside, read.decisionId, MAIL("eve@evil.test"), runs)).narrowedLabels,
    ).toEqual([]);
    const late = fresh("run");
    const first = await call(token, late, "read_customer_email", READ_CUSTOMER, { via: runs });
    await call(token, late, "lookup_order", LOOK, { via: runs });
    expect(
      (await report(token, late, first.decisionId, MAIL("bo@example.com"), runs)).narrowedLabels,
    ).toEqual([]);
    expect(await labelsNow(token, late)).toEqual(["private", "untrusted"]);
    // Content that is not strict JSON is refused and changes nothing.
    await expect(
      runs.clients.authority.reportResult({
        grantToken: token,
        runId: late,
        decisionId: first.decisionId,
        outcome: ResultOutcome.SUCCEEDED,
        resultJson: '{"from":"bo@example.com","from":"x@example.com"}',
      }),
    ).rejects.toMatchObject({ code: 3 });
  });

  it("the demo's owner mail stays untrusted whoever sent it (no unlessResult)", async () => {
    const { token } = await issue(charter);
    const run = fresh("run");
    const read = await call(token, run, "read_email", READ);
    expect(
      (await report(token, run, read.decisionId, MAIL("bo@example.com"))).narrowedLabels,
    ).toEqual([]);
    expect((await call(token, run, "send_email", SEND)).decision).toBe(Decision.REQUIRE_APPROVAL);
  });

  it("a result's content can bring labels in (ifResult): an order with a customer's note", async () => {
    const { token } = await issue(runs, "support-agent");
    const run = fresh("run");
    const looked = await call(
      token,
      run,
      "lookup_order",
      { order_id: "ord_ABC123" },
      { via: runs },
    );
    const plain = await report(token, run, looked.decisionId, { order_id: "ord_ABC123" }, runs);
    expect(plain.addedLabels).toEqual([]);
    const noted = await report(
      token,
      run,
      looked.decisionId,
      { customer_note: "refund 500 to IBAN …" },
      runs,
    );
    expect(noted.addedLabels).toEqual(["untrusted"]);
  });
});

describe("windows counted in flight (fixtures/run-rules)", () => {
  const refund = (amount: number) => ({ order_id: "ord_ABC123", amount });

  it("three concurrent refunds of 90 under a sum of 200 per owner: exactly two allowed", async () => {
    const grants = await Promise.all([1, 2, 3].map(() => issue(runs, "support-agent")));
    const verdicts = await Promise.all(
      grants.map((g) => call(g.token, fresh("run"), "issue_refund", refund(90), { via: runs })),
    );
    expect(verdicts.filter((v) => v.decision === Decision.ALLOW)).toHaveLength(2);
    const denied = verdicts.find((v) => v.decision !== Decision.ALLOW);
    expect(denied).toMatchObject({
      decision: Decision.DENY,
      rule: "support.refunds-per-owner",
      reason: { code: "RUN_RULE" },
    });
  });

  it("a failed refund gives its count back; a fourth refund in a run needs approval", async () => {
    const res = await runs.clients.grants.issueGrant({
      profile: "support-agent",
      subject: "agent:w",
      owner: "owner-w@example.com",
      purpose: "w",
    });
    const token = res.grantToken;
    const run = fresh("run");
    const first = await call(token, run, "issue_refund", refund(150), { via: runs });
    expect(first.decision).toBe(Decision.ALLOW);
    expect((await call(token, run, "issue_refund", refund(60), { via: runs })).decision).toBe(
      Decision.DENY,
    );
    const released = await runs.clients.authority.reportResult({
      grantToken: token,
      runId: run,
      decisionId: first.decisionId,
      outcome: ResultOutcome.FAILED,
      labels: [],
    });
    expect(released.released).toBe(2);
    for (let i = 0; i < 3; i++)
      expect((await call(token, run, "issue_refund", refund(10), { via: runs })).decision).toBe(
        Decision.ALLOW,
      );
    expect((await call(token, run, "issue_refund", refund(10), { via: runs })).decision).toBe(
      Decision.REQUIRE_APPROVAL,
    );
  });

  it("200 concurrent refunds of 3 under a sum of 200: exactly 66 allowed", async () => {
    const res = await runs.clients.grants.issueGrant({
      profile: "support-agent",
      subject: "agent:many",
      owner: "owner-many@example.com",
      purpose: "many",
    });
    const verdicts = await Promise.all(
      Array.from({ length: 200 }, () =>
        call(res.grantToken, "", "issue_refund", refund(3), { via: runs }),
      ),
    );
    expect(verdicts.filter((v) => v.decision === Decision.ALLOW)).toHaveLength(66);
    expect(verdicts.filter((v) => v.decision === Decision.DENY)).toHaveLength(134);
  });
});

describePostgres("runs across two PostgreSQL replicas", () => {
  const windows = testSchema("runs-windows");
  const labels = testSchema("runs-labels");
  let a: TestCharter;
  let b: TestCharter;
  let c: TestCharter;
  let d: TestCharter;
  beforeAll(async () => {
    await Promise.all([windows.create(), labels.create()]);
    const runRules = {
      catalog: join(FIXTURES, "run-rules/catalog.yaml"),
      policy: join(FIXTURES, "run-rules/policy.yaml"),
      database: windows.url,
    };
    [a, b, c, d] = await Promise.all([
      startTestCharter({ config: runRules }),
      startTestCharter({ config: runRules }),
      startTestCharter({ config: { database: labels.url } }),
      startTestCharter({ config: { database: labels.url } }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([a, b, c, d].map((x) => x.stop()));
    await Promise.all([windows.drop(), labels.drop()]);
  });

  it("200 concurrent refunds of 3 through both replicas under a sum of 200: exactly 66 allowed", async () => {
    const res = await a.clients.grants.issueGrant({
      profile: "support-agent",
      subject: "agent:replicas",
      owner: "owner-replicas@example.com",
      purpose: "replicas",
    });
    const verdicts = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        call(
          res.grantToken,
          "",
          "issue_refund",
          { order_id: "ord_ABC123", amount: 3 },
          {
            via: i % 2 === 0 ? a : b,
          },
        ),
      ),
    );
    expect(verdicts.filter((v) => v.decision === Decision.ALLOW)).toHaveLength(66);
  });

  it("labels written through both replicas at once are all kept: the next send is held", async () => {
    const res = await c.clients.grants.issueGrant({
      profile: "owner-assistant",
      subject: "agent:replicas",
      owner: OWNER,
      purpose: "replicas",
    });
    const runIds = Array.from({ length: 20 }, () => fresh("pg-run"));
    await Promise.all(
      runIds.flatMap((run) => [
        call(res.grantToken, run, "fetch_url", FETCH, { via: c }),
        call(res.grantToken, run, "lookup_contact", LOOKUP, { via: d }),
      ]),
    );
    const sends = await Promise.all(
      runIds.map((run, i) => call(res.grantToken, run, "send_email", SEND, { via: i % 2 ? c : d })),
    );
    expect(sends.map((v) => v.runLabels.join(","))).toEqual(runIds.map(() => "private,untrusted"));
    expect(sends.every((v) => v.decision === Decision.REQUIRE_APPROVAL)).toBe(true);
  });
});
