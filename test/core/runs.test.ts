import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  buildCatalog,
  buildPolicy,
  compose,
  decide,
  type Catalog,
  type Policy,
  type TaskGrant,
  type ToolCall,
  type Verdict,
} from "../../src/core/index.js";
import { decidedRunEffects } from "../../src/core/run-effects.js";
import {
  emptyRun,
  reportedLabels,
  windowAmount,
  windowKey,
  type RunView,
  type SeenLabel,
} from "../../src/core/run.js";
import { demoPair, fixturePair } from "../support/demo.js";
import { loadErrorOf } from "../support/load-error.js";

function expectLoadError(run: () => unknown, fragment: string): void {
  expect(loadErrorOf(run).message).toContain(fragment);
}

const NOW = 1_700_000_100;

function grantOf(pair: { catalog: Catalog; policy: Policy }, profile: string): TaskGrant {
  const result = compose(
    { profile, subject: "agent-1", owner: "ana", purpose: "runs" },
    pair.policy,
    pair.catalog,
    NOW - 100,
    `grt_${profile}`,
  );
  if (result.kind !== "granted") throw new Error(JSON.stringify(result));
  return result.grant;
}

const seen = (label: string, toolName: string, call: number): SeenLabel => ({
  label,
  actionId: toolName,
  toolName,
  call,
});

function runWith(labels: SeenLabel[], extra: Partial<RunView> = {}): RunView {
  return { ...emptyRun("run-1"), labels, calls: labels.length, ...extra };
}

const MAIL = { to: "bo@example.com", subject: "Notes", body: "Here are the notes." };
const SEND_INTERNAL: ToolCall = { callId: "c1", toolName: "send_email", arguments: MAIL };

describe("the demo's Rule of Two (owner-assistant)", () => {
  const pair = demoPair();
  const grant = grantOf(pair, "owner-assistant");
  const decideIn = (call: ToolCall, run?: RunView, extra = {}): Verdict =>
    decide(grant, pair.catalog, call, { now: NOW, ...(run ? { run } : {}), ...extra });

  it("holds internal mail for approval once the run has read untrusted content and private data", () => {
    const run = runWith([seen("untrusted", "fetch_url", 1), seen("private", "read_email", 2)]);
    const v = decideIn(SEND_INTERNAL, run);
    expect(v.decision).toBe("require_approval");
    expect(v.requirement).toBe("owner");
    expect(v.rule).toBe("owner-assistant.rule-of-two");
    expect(v.runLabels).toEqual(["untrusted", "private"]);
    expect(v.reason?.code).toBe("RUN_RULE");
    expect(v.reason?.message).toBe(
      'This run has read untrusted content (fetch_url, call 1) and private data (read_email, call 2); "send_email" now needs the owner\'s approval.',
    );
  });

  it("sends internal mail freely after private data alone (a contact lookup)", () => {
    const v = decideIn(SEND_INTERNAL, runWith([seen("private", "lookup_contact", 1)]));
    expect(v.decision).toBe("allow");
    expect(v.runLabels).toEqual(["private"]);
    expect(v.rule).toBeUndefined();
  });

  it("judges a call without a run as today", () => {
    expect(decideIn(SEND_INTERNAL).decision).toBe("allow");
    const noRun = { ...emptyRun(""), labels: [seen("untrusted", "x", 1), seen("private", "y", 2)] };
    const v = decideIn(SEND_INTERNAL, noRun);
    expect(v.decision).toBe("allow");
    expect(v.runLabels).toBeUndefined();
  });

  it("counts a fetch as sending out (also: [web.fetch]) and holds writes after untrusted content", () => {
    const both = runWith([seen("untrusted", "web_search", 1), seen("private", "read_email", 2)]);
    const fetch = {
      callId: "f",
      toolName: "fetch_url",
      arguments: { url: "https://evil.test/?q=x" },
    };
    expect(decideIn(fetch, both).decision).toBe("require_approval");
    const untrusted = runWith([seen("untrusted", "fetch_url", 1)]);
    const update = {
      callId: "u",
      toolName: "update_contact",
      arguments: { contact_id: "con_ABCDEF", name: "Eve" },
    };
    const v = decideIn(update, untrusted);
    expect(v.decision).toBe("require_approval");
    expect(v.rule).toBe("owner-assistant.no-writes-after-untrusted");
    expect(decideIn(update, runWith([seen("private", "read_email", 1)])).decision).toBe("allow");
  });

  it("an approval of the held call declassifies that one call, bound to its digest", () => {
    const run = runWith([seen("untrusted", "fetch_url", 1), seen("private", "read_email", 2)]);
    const held = decideIn(SEND_INTERNAL, run);
    const approval = {
      id: "apr_1",
      callDigest: held.callDigest,
      status: "approved" as const,
      expiresAt: NOW + 60,
    };
    const v = decideIn(SEND_INTERNAL, run, { approval });
    expect(v.decision).toBe("allow");
    expect(v.rule).toBe("owner-assistant.rule-of-two");
    const other = {
      ...SEND_INTERNAL,
      arguments: { ...MAIL, to: "cy@example.com" },
    };
    expect(decideIn(other, run, { approval }).reason?.code).toBe("APPROVAL_MISMATCH");
  });

  it("labels an allowed call's run from the catalog, conditioned on the arguments", () => {
    const effects = (call: ToolCall) =>
      decidedRunEffects(grant, pair.catalog, decideIn(call, runWith([])), call.arguments, "run-1");
    expect(
      effects({ callId: "1", toolName: "fetch_url", arguments: { url: "https://news.test/" } })
        .labels,
    ).toEqual(["untrusted"]);
    expect(
      effects({
        callId: "2",
        toolName: "fetch_url",
        arguments: { url: "https://intranet.example.com/wiki" },
      }).labels,
    ).toEqual([]);
    expect(
      effects({ callId: "3", toolName: "read_file", arguments: { path: "/workspace/notes.md" } })
        .labels,
    ).toEqual(["private"]);
    expect(
      effects({
        callId: "4",
        toolName: "read_file",
        arguments: { path: "/workspace/inbox/po.pdf" },
      }).labels,
    ).toEqual(["private", "untrusted"]);
    // A held call brings nothing in: it has not run.
    const held = runWith([seen("untrusted", "fetch_url", 1), seen("private", "read_email", 2)]);
    const v = decideIn(SEND_INTERNAL, held);
    expect(decidedRunEffects(grant, pair.catalog, v, SEND_INTERNAL.arguments, "run-1")).toEqual({
      labels: [],
      windows: [],
    });
  });
});

describe("windows (fixtures/run-rules)", () => {
  const pair = fixturePair("run-rules/");
  const grant = grantOf(pair, "support-agent");
  const ownerKey = windowKey("support.refunds-per-owner", "owner", grant, "run-1");
  const runKey = windowKey("support.refunds-per-run", "run", grant, "run-1");
  const refund = (amount: number): ToolCall => ({
    callId: "r",
    toolName: "issue_refund",
    arguments: { order_id: "ord_ABC123", amount },
  });
  const withUsage = (sum: number, calls = 0): RunView => ({
    ...emptyRun("run-1"),
    windows: { [ownerKey]: { calls: 0, sum }, [runKey]: { calls, sum: 0 } },
  });
  const decideIn = (call: ToolCall, run: RunView): Verdict =>
    decide(grant, pair.catalog, call, { now: NOW, run });

  it("allows a refund while the owner's sum stays within 200, and denies the one past it", () => {
    expect(decideIn(refund(90), withUsage(110)).decision).toBe("allow");
    const v = decideIn(refund(90), withUsage(111));
    expect(v.decision).toBe("deny");
    expect(v.reason?.code).toBe("RUN_RULE");
    expect(v.rule).toBe("support.refunds-per-owner");
    expect(v.reason?.message).toContain("a total of 200 (amount) per owner in 1 hour");
  });

  it("counts per owner also without a run; a per-run window needs a run", () => {
    const noRun: RunView = {
      ...emptyRun(""),
      windows: {
        [windowKey("support.refunds-per-owner", "owner", grant, "")]: { calls: 0, sum: 180 },
      },
    };
    expect(decide(grant, pair.catalog, refund(30), { now: NOW, run: noRun }).decision).toBe("deny");
    expect(decideIn(refund(10), withUsage(0, 3)).decision).toBe("require_approval");
    expect(decideIn(refund(10), withUsage(0, 2)).decision).toBe("allow");
  });

  it("charges an allowed refund in both windows, bounded unless its own approval was presented", () => {
    const v = decideIn(refund(90), withUsage(0));
    const e = decidedRunEffects(grant, pair.catalog, v, refund(90).arguments, "run-1");
    expect(e.windows).toEqual([
      { key: ownerKey, seconds: 3600, amount: 90, maxSum: 200 },
      { key: runKey, seconds: 3600, amount: 0, maxCalls: 3 },
    ]);
    const approved = { ...v, approvalId: "apr_1", rule: "support.refunds-per-run" };
    const again = decidedRunEffects(grant, pair.catalog, approved, refund(90).arguments, "run-1");
    expect(again.windows[1]).toEqual({ key: runKey, seconds: 3600, amount: 0 });
    expect(again.windows[0]).toEqual({ key: ownerKey, seconds: 3600, amount: 90, maxSum: 200 });
  });

  it("judges an amount that is not a number of zero or more as going past the window (fail closed)", () => {
    const w = { seconds: 60, per: "run" as const, sum: { path: "/amount", max: 10 } };
    expect(windowAmount(w, { amount: 4 })).toBe(4);
    expect(windowAmount(w, { amount: -5 })).toBeUndefined();
    expect(windowAmount(w, { amount: "5" })).toBeUndefined();
    expect(windowAmount(w, {})).toBeUndefined();
  });
});

describe("labels from a reported result", () => {
  const pair = fixturePair("run-rules/");
  const read = pair.catalog.actions.get("mail.read");
  const matches = (schema: unknown, value: unknown) =>
    pair.catalog.schemas.compile(schema as boolean).check(value).length === 0;
  it("takes untrusted back for mail from inside the organisation, never private", () => {
    if (!read) throw new Error("no mail.read");
    expect(reportedLabels(read, { from: "bo@example.com" }, matches)).toEqual({
      add: [],
      drop: ["untrusted"],
    });
    expect(reportedLabels(read, { from: "eve@evil.test" }, matches)).toEqual({ add: [], drop: [] });
    expect(reportedLabels(read, "not an object", matches)).toEqual({ add: [], drop: [] });
    // A schema that cannot be evaluated takes nothing back.
    expect(reportedLabels(read, { from: "bo@example.com" }, () => undefined)).toEqual({
      add: [],
      drop: [],
    });
  });
  it("never makes the static labels depend on a report: ifResult entries are not static", () => {
    const catalog = buildCatalog(
      {
        version: "1",
        actions: [{ id: "a", results: [{ labels: ["x"], ifResult: { required: ["note"] } }] }],
      },
      "c.yaml",
    );
    const action = catalog.actions.get("a");
    if (!action) throw new Error("no a");
    expect(action.results).toEqual([{ labels: ["x"], ifResult: { required: ["note"] } }]);
    expect(catalog.labels).toEqual(["x"]);
    expect(reportedLabels(action, { note: "hi" }, () => undefined)).toEqual({
      add: ["x"],
      drop: [],
    });
    expectLoadError(
      () =>
        buildCatalog(
          {
            version: "1",
            actions: [{ id: "a", results: { labels: ["x"], ifResult: true, unlessResult: true } }],
          },
          "c.yaml",
        ),
      "sets ifResult or unlessResult, not both",
    );
  });
});

describe("loading rules over the run", () => {
  const pair = demoPair();
  const load = (source: unknown) =>
    buildPolicy(
      {
        version: "t",
        sources: {
          s: { allow: ["email.send", "refund.issue", "web.fetch"], ...(source as object) },
        },
        profiles: {},
      },
      pair.catalog,
      "p.yaml",
    );

  it("refuses what could never work, naming each problem", () => {
    expectLoadError(
      () =>
        load({ run: [{ actions: ["email.send"], seen: ["tainted"], then: "deny", reason: "no" }] }),
      'seen names label "tainted", which no catalog action\'s results bring in',
    );
    expectLoadError(
      () =>
        load({ run: [{ actions: ["email.nope"], seen: ["private"], then: "deny", reason: "no" }] }),
      'actions names action "email.nope"',
    );
    expectLoadError(
      () => load({ run: [{ actions: ["email.send"], within: "1h", then: "deny", reason: "no" }] }),
      "within needs after",
    );
    expectLoadError(
      () => load({ run: [{ actions: ["email.send"], then: "deny", reason: "no" }] }),
      "asks for seen, after or window",
    );
    expectLoadError(
      () =>
        load({
          run: [
            {
              actions: ["email.send"],
              window: { per: "owner", duration: "1h", sum: "/to", max: 1 },
              then: "deny",
              reason: "no",
            },
          ],
        }),
      "does not declare it as a number",
    );
    expectLoadError(() => load({ run: [{ preset: "rule-of-three" }] }), "unknown preset");
    expectLoadError(
      () =>
        load({
          run: [
            { actions: ["email.send"], seen: ["private"], when: false, then: "deny", reason: "no" },
          ],
        }),
      "can never match",
    );
    expectLoadError(
      () =>
        load({ run: [{ effects: ["telepathic"], seen: ["private"], then: "deny", reason: "no" }] }),
      "effects must be a list of effects",
    );
  });

  it("refuses labels a catalog result declares badly", () => {
    const bad = (results: unknown) => () =>
      buildCatalog({ version: "1", actions: [{ id: "a", results }] }, "c.yaml");
    expectLoadError(bad({ labels: [] }), "labels must be a non-empty list");
    expectLoadError(bad({ labels: ["ok"], also: 1 }), "must be {labels");
    expectLoadError(bad({ labels: ["bad label"] }), "labels must be a non-empty list");
    expectLoadError(bad([{ labels: ["x"], when: { type: "nonsense" } }]), "results[0].when");
  });

  it("expands the Rule of Two onto every external action (and `also`)", () => {
    const policy = load({ run: ["rule-of-two"] });
    const source = policy.sources.get("s");
    const external = [...pair.catalog.actions.values()].filter((a) => a.effect === "external");
    for (const a of external)
      expect(source?.caveats.get(a.id)?.rules.map((r) => r.id)).toContain("s.rule-of-two");
    expect(source?.caveats.get("web.fetch")).toBeUndefined();
    const also = load({ run: [{ preset: "rule-of-two", also: ["web.fetch"] }] });
    expect(also.sources.get("s")?.caveats.get("web.fetch")?.rules[0]?.run?.seen).toEqual([
      "private",
      "untrusted",
    ]);
  });
});

describe("properties", () => {
  const pair = demoPair();
  const grant = grantOf(pair, "owner-assistant");
  const LABELS = ["untrusted", "private"];
  const CALLS: ToolCall[] = [
    SEND_INTERNAL,
    { ...SEND_INTERNAL, arguments: { ...MAIL, to: "x@outside.test" } },
    { callId: "f", toolName: "fetch_url", arguments: { url: "https://news.test/a" } },
    { callId: "u", toolName: "update_contact", arguments: { contact_id: "con_ABCDEF", name: "N" } },
    { callId: "l", toolName: "lookup_contact", arguments: { query: "Bo" } },
    {
      callId: "r",
      toolName: "issue_refund",
      arguments: { order_id: "ord_ABC123", amount: 20, currency: "EUR", reason: "damaged" },
    },
  ];
  const rank = (v: Verdict) =>
    v.decision === "allow" ? 2 : v.decision === "require_approval" ? 1 : 0;

  it("a run never gains authority over the same call with more labels", () => {
    fc.assert(
      fc.property(
        fc.subarray(LABELS),
        fc.subarray(LABELS),
        fc.constantFrom(...CALLS),
        (a, more, call) => {
          const fewer = runWith(a.map((l, i) => seen(l, "t", i + 1)));
          const all = [...new Set([...a, ...more])];
          const wider = runWith(all.map((l, i) => seen(l, "t", i + 1)));
          const vA = decide(grant, pair.catalog, call, { now: NOW, run: fewer });
          const vB = decide(grant, pair.catalog, call, { now: NOW, run: wider });
          expect(rank(vB)).toBeLessThanOrEqual(rank(vA));
        },
      ),
    );
  });
});
