import { beforeEach, describe, expect, it } from "vitest";
import type { DecisionEffects, DecisionRecord, Store } from "../../src/store/port.js";
import type { RunEffect, RunQuery, RunRow } from "../../src/store/port-runs.js";
import { expectStoreError } from "./contract-assert.js";
import { ISSUED_AT, makeDecision } from "./fixtures.js";

const T = ISSUED_AT + 10;
const RUN: RunRow = { grantId: "g-root", runId: "run-1" };
const WINDOW = "rule-w|run:g-root:run-1";

const query = (overrides: Partial<RunQuery> = {}): RunQuery => ({
  labelsFrom: [RUN],
  run: RUN,
  after: [],
  windows: [],
  now: T,
  ...overrides,
});

const effect = (overrides: Partial<RunEffect> = {}): RunEffect => ({
  query: query(),
  judged: { labels: [], last: {} },
  run: { ...RUN, actionId: "email.read", toolName: "read_email" },
  labels: [],
  writeTo: [RUN],
  windows: [],
  expiresAt: ISSUED_AT + 900,
  ...overrides,
});

/** The runs of a store: labels, calls, last allowed times and window charges, read and written with decisions (`RunEffect`). */
export function describeRunsContract(current: () => Store): void {
  describe("runs", () => {
    let store: Store;
    let n = 0;
    const id = () => `dec_run_${n++}`;
    const commit = (
      decisionId: string,
      run: RunEffect,
      overrides: Partial<DecisionRecord> = {},
      more: DecisionEffects = {},
    ) =>
      store.commitDecision(
        makeDecision(decisionId, { runId: "run-1", actionId: "email.read", ...overrides }),
        { ...more, run },
      );
    const usage = async (now = T, seconds = 3600) =>
      (await store.readRun(query({ windows: [{ key: WINDOW, seconds }], now }))).windows[WINDOW];
    beforeEach(() => {
      store = current();
    });

    it("reads an empty run: no labels, no calls, no last times, every window at zero", async () => {
      expect(
        await store.readRun(
          query({
            labelsFrom: [RUN, { grantId: "g-root" }],
            after: ["email.read", "email.send"],
            windows: [
              { key: WINDOW, seconds: 60 },
              { key: "other|grant:g-root", seconds: 3600 },
            ],
          }),
        ),
      ).toEqual({
        labels: [],
        calls: 0,
        last: {},
        windows: { [WINDOW]: { calls: 0, sum: 0 }, "other|grant:g-root": { calls: 0, sum: 0 } },
      });
      expect(
        await store.readRun({ labelsFrom: [], after: ["email.read"], windows: [], now: T }),
      ).toEqual({ labels: [], calls: 0, last: {}, windows: {} });
    });

    it("reads back the labels an allow wrote with their first sighting, its calls and last times; a recommit writes nothing more", async () => {
      const first = id();
      const fetch = effect({
        run: { ...RUN, actionId: "web.fetch", toolName: "fetch_url" },
        labels: ["untrusted"],
        windows: [{ key: WINDOW, seconds: 3600, amount: 2 }],
      });
      expect(await commit(first, fetch, { actionId: "web.fetch" })).toEqual({
        kind: "committed",
      });
      expect(await commit(first, fetch, { actionId: "web.fetch" })).toEqual({
        kind: "committed",
      });
      const read = effect({
        judged: { labels: ["untrusted"], last: {} },
        labels: ["untrusted", "private", "private"],
      });
      expect(await commit(id(), read, { decidedAt: T + 5 })).toEqual({ kind: "committed" });
      expect(
        await store.readRun(
          query({
            after: ["web.fetch", "email.read", "email.send"],
            windows: [{ key: WINDOW, seconds: 3600 }],
          }),
        ),
      ).toEqual({
        labels: [
          { label: "private", actionId: "email.read", toolName: "read_email", call: 2 },
          { label: "untrusted", actionId: "web.fetch", toolName: "fetch_url", call: 1 },
        ],
        calls: 2,
        last: { "web.fetch": T, "email.read": T + 5 },
        windows: { [WINDOW]: { calls: 1, sum: 2 } },
      });
    });

    it("keeps the run labels and the rule of a decision on its record and its audit record", async () => {
      const decisionId = id();
      const record = makeDecision(decisionId, {
        decision: "deny",
        reasonCode: "NOT_GRANTED",
        runId: "run-1",
        runLabels: ["untrusted", "private"],
        rule: "no-exfiltration",
      });
      await store.commitDecision(record);
      expect(await store.getDecision(decisionId)).toStrictEqual({
        ...record,
        runLabels: ["private", "untrusted"],
      });
      const entry = (await store.readAudit(0, 100_000))
        .map((r) => JSON.parse(r.entry) as Record<string, unknown>)
        .find((e) => e["decisionId"] === decisionId);
      expect(entry).toMatchObject({ runLabels: ["private", "untrusted"], rule: "no-exfiltration" });
      const plain = id();
      await store.commitDecision(makeDecision(plain));
      expect(await store.getDecision(plain)).toStrictEqual(makeDecision(plain));
    });

    it("reads labels from one run, or every run of a grant with its '*' row, first sighting earliest then in labelsFrom order", async () => {
      const child: RunRow = { grantId: "g-child", runId: "run-x" };
      const star: RunRow = { grantId: "g-child", runId: "*" };
      const write = (row: RunRow, labels: string[], actionId: string, at = T) =>
        commit(
          id(),
          effect({
            query: query({ labelsFrom: [row], run: row }),
            run: { ...row, actionId, toolName: actionId.replace(".", "_") },
            labels,
            writeTo: [row],
          }),
          { grantId: row.grantId, runId: row.runId, decidedAt: at, actionId },
        );
      await write(child, ["a"], "web.fetch");
      await write(star, ["b"], "files.read");
      await write(RUN, ["a"], "email.read");
      await write({ grantId: "g-other", runId: "r" }, ["a", "c"], "db.query", T - 5);
      const labels = async (labelsFrom: RunQuery["labelsFrom"]) =>
        (await store.readRun(query({ labelsFrom }))).labels.map((l) => `${l.label}:${l.actionId}`);
      expect(await labels([{ grantId: "g-child" }])).toEqual(["a:web.fetch", "b:files.read"]);
      expect(await labels([child])).toEqual(["a:web.fetch"]);
      expect(await labels([star])).toEqual(["b:files.read"]);
      expect(await labels([RUN, { grantId: "g-child" }])).toEqual(["a:email.read", "b:files.read"]);
      expect(await labels([{ grantId: "g-child" }, RUN])).toEqual(["a:web.fetch", "b:files.read"]);
      expect(await labels([RUN, { grantId: "g-other" }])).toEqual(["a:db.query", "c:db.query"]);
      expect(await labels([{ grantId: "g-nobody" }])).toEqual([]);
    });

    it("answers run_changed for a label seen since the decision, writing and consuming nothing", async () => {
      await commit(id(), effect({ labels: ["untrusted"] }));
      const head = await store.auditHead();
      const stale = id();
      const budget = { actionId: "email.read", grants: [{ grantId: "g-root", maxCalls: 10 }] };
      const step = {
        runId: "run-1",
        stepKey: '["tool_call","stale"]',
        fingerprint: "f",
        verdictJson: '{"decision":"allow"}',
      };
      const outcome = await commit(
        stale,
        effect({ labels: ["private"], windows: [{ key: WINDOW, seconds: 60, amount: 1 }] }),
        { stepKey: step.stepKey },
        { budget, step },
      );
      expect(outcome).toMatchObject({ kind: "run_changed" });
      expect(outcome.kind === "run_changed" && outcome.detail).toContain("untrusted");
      expect(await store.getDecision(stale)).toBeUndefined();
      expect(await store.auditHead()).toEqual(head);
      expect(await store.getStep("g-root", "run-1", step.stepKey)).toBeUndefined();
      expect((await store.getBudgetUsage("g-root")).calls).toBe(0);
      const run = await store.readRun(query({ windows: [{ key: WINDOW, seconds: 60 }] }));
      expect(run.labels.map((l) => l.label)).toEqual(["untrusted"]);
      expect(run.calls).toBe(1);
      expect(run.windows[WINDOW]).toEqual({ calls: 0, sum: 0 });
      // Judged on the run as it is, the same call commits.
      expect(
        await commit(stale, effect({ judged: { labels: ["untrusted"], last: {} } }), {}, {}),
      ).toEqual({ kind: "committed" });
    });

    it("commits one of several calls judged on one run that each bring a label in; the others see it", async () => {
      const outcomes = await Promise.all(
        Array.from({ length: 8 }, () => commit(id(), effect({ labels: ["untrusted"] }))),
      );
      expect(outcomes.filter((o) => o.kind === "committed")).toHaveLength(1);
      expect(outcomes.filter((o) => o.kind === "run_changed")).toHaveLength(7);
      expect(await store.readRun(query())).toMatchObject({ calls: 1 });
    });

    it("answers run_changed when an action of `after` was allowed at another time than judged", async () => {
      const after = (last: Record<string, number>) =>
        effect({ query: query({ after: ["email.read"] }), judged: { labels: [], last } });
      expect(await commit(id(), after({ "email.read": T }))).toMatchObject({
        kind: "run_changed",
      });
      expect(await commit(id(), after({}))).toEqual({ kind: "committed" });
      expect(await commit(id(), after({}))).toMatchObject({ kind: "run_changed" });
      expect(await commit(id(), after({ "email.read": T - 1 }))).toMatchObject({
        kind: "run_changed",
      });
      expect(await commit(id(), after({ "email.read": T }))).toEqual({ kind: "committed" });
      expect((await store.readRun(query())).calls).toBe(2);
    });

    it("refuses a charge past a window's maxCalls or maxSum as run_changed, and sums exactly", async () => {
      const calls = (max: number) =>
        effect({ windows: [{ key: WINDOW, seconds: 3600, amount: 0, maxCalls: max }] });
      expect(await commit(id(), calls(2))).toEqual({ kind: "committed" });
      expect(await commit(id(), calls(2))).toEqual({ kind: "committed" });
      expect(await commit(id(), calls(2))).toMatchObject({ kind: "run_changed" });
      expect(await usage()).toEqual({ calls: 2, sum: 0 });
      const sum = (amount: number) =>
        effect({ windows: [{ key: WINDOW, seconds: 3600, amount, maxSum: 12 }] });
      expect(await commit(id(), sum(4))).toEqual({ kind: "committed" });
      expect(await commit(id(), sum(5.5))).toEqual({ kind: "committed" });
      expect(await commit(id(), sum(2.75))).toMatchObject({ kind: "run_changed" });
      expect(await commit(id(), sum(2.5))).toEqual({ kind: "committed" });
      expect(await usage()).toEqual({ calls: 5, sum: 12 });
      expect(await commit(id(), sum(0.25))).toMatchObject({ kind: "run_changed" });
      expect(await commit(id(), sum(0))).toEqual({ kind: "committed" });
      expect((await store.readRun(query())).calls).toBe(6);
    });

    it("ignores charges made before the window; an unbounded charge is always made", async () => {
      await commit(id(), effect({ windows: [{ key: WINDOW, seconds: 60, amount: 3 }] }));
      expect(await usage(T + 60, 60)).toEqual({ calls: 1, sum: 3 });
      expect(await usage(T + 61, 60)).toEqual({ calls: 0, sum: 0 });
      const later = effect({
        query: query({ now: T + 61 }),
        windows: [{ key: WINDOW, seconds: 60, amount: 1, maxCalls: 1 }],
      });
      expect(await commit(id(), later, { decidedAt: T + 61 })).toEqual({ kind: "committed" });
      for (let i = 0; i < 5; i++)
        expect(
          await commit(id(), effect({ windows: [{ key: WINDOW, seconds: 60, amount: 100 }] })),
        ).toEqual({ kind: "committed" });
      expect(await usage(T + 1, 60)).toEqual({ calls: 7, sum: 504 });
    });

    it("writes nothing of the run for a deny, nor for an allow the budget refuses", async () => {
      const everything = effect({
        judged: { labels: [], last: {} },
        labels: ["untrusted"],
        windows: [{ key: WINDOW, seconds: 3600, amount: 1, maxCalls: 5 }],
      });
      expect(
        await commit(id(), everything, { decision: "deny", reasonCode: "NOT_GRANTED" }),
      ).toEqual({ kind: "committed" });
      expect(
        await commit(
          id(),
          everything,
          {},
          { budget: { actionId: "email.read", grants: [{ grantId: "g-root", maxCalls: 0 }] } },
        ),
      ).toMatchObject({ kind: "refused", reasonCode: "LIMIT_EXCEEDED" });
      expect(
        await store.readRun(
          query({ after: ["email.read"], windows: [{ key: WINDOW, seconds: 3600 }] }),
        ),
      ).toEqual({ labels: [], calls: 0, last: {}, windows: { [WINDOW]: { calls: 0, sum: 0 } } });
      // A dry run's effect_suppressed brings its labels in (here without counting a call).
      const { run: _counted, ...labelsOnly } = effect({ labels: ["untrusted"] });
      expect(
        await commit(id(), labelsOnly, {
          decision: "effect_suppressed",
        }),
      ).toEqual({ kind: "committed" });
      expect((await store.readRun(query())).labels).toEqual([
        { label: "untrusted", actionId: "email.read", toolName: "send_email", call: 0 },
      ]);
    });

    it("reportResult() adds the result's labels and releases a failed call's charges, once", async () => {
      const allowed = id();
      await commit(
        allowed,
        effect({ labels: ["untrusted"], windows: [{ key: WINDOW, seconds: 3600, amount: 7 }] }),
      );
      const report = {
        decisionId: allowed,
        grantId: "g-root",
        runId: "run-1",
        failed: true,
        labels: ["private", "untrusted"],
        writeTo: [RUN, { grantId: "g-root", runId: "*" }],
        at: T + 20,
        expiresAt: ISSUED_AT + 900,
        caller: "gateway",
      };
      expect(await store.reportResult(report)).toEqual({ added: ["private"], released: 1 });
      expect(await usage()).toEqual({ calls: 0, sum: 0 });
      expect((await store.readRun(query())).labels).toEqual([
        { label: "private", actionId: "email.read", toolName: "send_email", call: 1 },
        { label: "untrusted", actionId: "email.read", toolName: "read_email", call: 1 },
      ]);
      const entries = (await store.readAudit(0, 100_000)).map(
        (r) => JSON.parse(r.entry) as Record<string, unknown>,
      );
      expect(entries.at(-1)).toEqual({
        seq: entries.length,
        at: T + 20,
        kind: "result_reported",
        decisionId: allowed,
        grantId: "g-root",
        runId: "run-1",
        failed: true,
        labels: ["private"],
        caller: "gateway",
      });
      expect(await store.reportResult(report)).toEqual({ added: [], released: 0 });
      expect(await store.reportResult({ ...report, failed: false, labels: ["x"] })).toEqual({
        added: ["x"],
        released: 0,
      });
    });

    it("reportResult() narrows the labels a call brought into its own run, only before the run's next decision", async () => {
      const read = id();
      await commit(
        read,
        effect({
          labels: ["private", "untrusted"],
          writeTo: [RUN, { grantId: "g-parent", runId: "*" }],
        }),
      );
      const report = {
        decisionId: read,
        grantId: "g-root",
        runId: "run-1",
        failed: false,
        labels: [],
        narrow: ["untrusted"],
        writeTo: [RUN, { grantId: "g-parent", runId: "*" }],
        at: T + 1,
        expiresAt: ISSUED_AT + 900,
      };
      expect(await store.reportResult(report)).toEqual({
        added: [],
        released: 0,
        narrowed: ["untrusted"],
      });
      expect((await store.readRun(query())).labels.map((l) => l.label)).toEqual(["private"]);
      // Up the tree the label stays: a parent may have been judged on it.
      const parent = await store.readRun(query({ labelsFrom: [{ grantId: "g-parent" }] }));
      expect(parent.labels.map((l) => l.label)).toEqual(["private", "untrusted"]);
      const audit = (await store.readAudit(0, 100_000)).map(
        (r) => JSON.parse(r.entry) as Record<string, unknown>,
      );
      expect(audit.at(-1)).toMatchObject({ kind: "result_reported", narrowed: ["untrusted"] });

      // A later decision of the run was judged on the label: nothing is taken back.
      const other: RunRow = { grantId: "g-root", runId: "run-2" };
      const first = id();
      await commit(
        first,
        effect({
          query: query({ labelsFrom: [other], run: other }),
          run: { ...other, actionId: "email.read", toolName: "read_email" },
          labels: ["untrusted"],
          writeTo: [other],
        }),
        { runId: "run-2" },
      );
      await commit(
        id(),
        effect({
          query: query({ labelsFrom: [other], run: other }),
          run: { ...other, actionId: "email.read", toolName: "read_email" },
          judged: { labels: ["untrusted"], last: {} },
          writeTo: [other],
        }),
        { runId: "run-2", decidedAt: T + 2 },
      );
      expect(
        await store.reportResult({
          ...report,
          decisionId: first,
          runId: "run-2",
          writeTo: [other],
        }),
      ).toEqual({ added: [], released: 0, narrowed: [] });
      const still = await store.readRun(query({ labelsFrom: [other], run: other }));
      expect(still.labels.map((l) => l.label)).toEqual(["untrusted"]);
    });

    it("reportResult() is NOT_FOUND for a decision that is not an allow of the grant in the run", async () => {
      const denied = id();
      await commit(denied, effect(), { decision: "deny", reasonCode: "NOT_GRANTED" });
      const allowed = id();
      await commit(allowed, effect());
      const head = await store.auditHead();
      const report = {
        decisionId: allowed,
        grantId: "g-root",
        runId: "run-1",
        failed: true,
        labels: ["x"],
        writeTo: [RUN],
        at: T,
        expiresAt: ISSUED_AT + 900,
      };
      for (const bad of [
        { decisionId: denied },
        { decisionId: "dec_unknown" },
        { grantId: "g-other" },
        { runId: "run-2" },
      ])
        await expectStoreError(store.reportResult({ ...report, ...bad }), "NOT_FOUND");
      expect(await store.auditHead()).toEqual(head);
      expect((await store.readRun(query())).labels).toEqual([]);
    });

    it("pruneGrants() deletes run rows and window charges expired before the cutoff and keeps live ones", async () => {
      const short = effect({
        labels: ["untrusted"],
        windows: [{ key: WINDOW, seconds: 60, amount: 1 }],
        expiresAt: ISSUED_AT + 100,
      });
      await commit(id(), short);
      const run2: RunRow = { grantId: "g-root", runId: "run-2" };
      const long = effect({
        query: query({ labelsFrom: [run2], run: run2 }),
        run: { ...run2, actionId: "email.read", toolName: "read_email" },
        labels: ["private"],
        writeTo: [run2],
        windows: [{ key: "long|grant:g-root", seconds: 100_000, amount: 2 }],
        expiresAt: ISSUED_AT + 10_000,
      });
      await commit(id(), long, { runId: "run-2" });
      const both = {
        labelsFrom: [{ grantId: "g-root" }],
        after: ["email.read"],
        windows: [
          { key: WINDOW, seconds: 60 },
          { key: "long|grant:g-root", seconds: 100_000 },
        ],
        now: T,
      };
      expect((await store.readRun({ ...both, run: RUN })).windows[WINDOW]).toEqual({
        calls: 1,
        sum: 1,
      });
      await store.pruneGrants(ISSUED_AT + 101);
      expect(await store.readRun({ ...both, run: RUN })).toEqual({
        labels: [{ label: "private", actionId: "email.read", toolName: "read_email", call: 1 }],
        calls: 0,
        last: {},
        windows: { [WINDOW]: { calls: 0, sum: 0 }, "long|grant:g-root": { calls: 1, sum: 2 } },
      });
      expect(await store.readRun({ ...both, run: run2 })).toMatchObject({
        calls: 1,
        last: { "email.read": T },
      });
    });
  });
}
