import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAppContext, type AppContext } from "../../src/app/context.js";
import {
  authorize,
  issueGrant,
  reportResult,
  type CallRequest,
  type Verdict,
} from "../../src/authority/index.js";
import { DEFAULTS } from "../../src/config/config.js";
import { FIXTURES } from "../support/charter-server.js";

// Properties of runs over the real application layer and a real SQLite file: whatever a run's
// calls and reported results, the labels its decisions are judged on only grow (a report may take
// a call's label back only before the run's next decision), and a call is never granted more with
// more labels than the same call was granted with fewer.
let dir: string;
let app: AppContext;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "charter-run-props-"));
  // The demo catalog with owner mail narrowable by a reported sender (as fixtures/run-rules does
  // for customer mail), so that reports can take a label back.
  const catalog = join(dir, "catalog.yaml");
  const demo = readFileSync(join(FIXTURES, "catalog.yaml"), "utf8");
  const narrowable = demo.replace(
    '    results: { labels: [private, untrusted] }\n    delegable: true\n    resource: "message/{message_id}"',
    // A function, not a string: `$'` in a replacement string means "the text after the match".
    () =>
      [
        "    results:",
        "      - labels: [private]",
        "      - labels: [untrusted]",
        "        unlessResult: { type: object, required: [from], properties: { from: { type: string, pattern: '@example\\.com$' } } }",
        "    delegable: true",
        '    resource: "message/{message_id}"',
      ].join("\n"),
  );
  if (narrowable === demo)
    throw new Error("the demo's email.read results changed: update this test");
  writeFileSync(catalog, narrowable);
  app = await createAppContext({
    ...DEFAULTS,
    dataDir: join(dir, "data"),
    catalog,
    policy: join(FIXTURES, "policy.yaml"),
  });
});
afterAll(async () => {
  await app.close();
  rmSync(dir, { recursive: true, force: true });
});

const CALLS: readonly (readonly [string, unknown])[] = [
  ["fetch_url", { url: "https://news.example.org/a" }],
  ["fetch_url", { url: "https://intranet.example.com/b" }],
  ["read_email", { message_id: "msg_7f3a9c21" }],
  ["lookup_contact", { query: "Bo" }],
  ["send_email", { to: "bo@example.com", subject: "s", body: "b" }],
  ["update_contact", { contact_id: "con_ABCDEF", name: "Bo" }],
  ["read_file", { path: "/workspace/inbox/po.txt" }],
];
const FROM = ["bo@example.com", "eve@evil.test"];

/** One step of a run: a call (by index into CALLS), or a report of the last allowed call's result. */
type Step = { readonly call: number } | { readonly report: number };
const steps = fc.array(
  fc.oneof(
    fc.record({ call: fc.integer({ min: 0, max: CALLS.length - 1 }) }),
    fc.record({ report: fc.integer({ min: 0, max: FROM.length - 1 }) }),
  ),
  { minLength: 1, maxLength: 10 },
);

let runs = 0;
async function replay(plan: readonly Step[]): Promise<Verdict[]> {
  const run = `prop-${++runs}`;
  // A grant of its own per run: the profile's call budget never decides here.
  const { token } = await issueGrant(app, {
    profile: "owner-assistant",
    subject: "agent:props",
    owner: "ana@example.com",
    purpose: "properties",
  });
  const verdicts: Verdict[] = [];
  let lastAllowed: { decisionId: string } | undefined;
  for (const [i, step] of plan.entries()) {
    if ("report" in step) {
      if (lastAllowed === undefined) continue;
      await reportResult(app, {
        grantToken: token,
        runId: run,
        decisionId: lastAllowed.decisionId,
        failed: false,
        labels: [],
        resultJson: JSON.stringify({ from: FROM[step.report] }),
      });
      continue;
    }
    const [toolName, args] = CALLS[step.call] as readonly [string, unknown];
    const call: CallRequest = {
      callId: `c${i}`,
      toolName,
      actionId: "",
      argumentsJson: JSON.stringify(args),
      step: { runId: run, toolCallId: `c${i}` },
    };
    const { verdict, decisionId } = await authorize(app, { grantToken: token, call });
    verdicts.push(verdict);
    if (verdict.decision === "allow") lastAllowed = { decisionId };
  }
  return verdicts;
}

const rank = (v: Verdict) =>
  v.decision === "allow" ? 2 : v.decision === "require_approval" ? 1 : 0;

describe("a run's labels, over any sequence of calls and reports", () => {
  it("only grow from one decision to the next", async () => {
    await fc.assert(
      fc.asyncProperty(steps, async (plan) => {
        const verdicts = await replay(plan);
        for (let i = 1; i < verdicts.length; i++) {
          const before = new Set(verdicts[i - 1]?.runLabels ?? []);
          const now = new Set(verdicts[i]?.runLabels ?? []);
          for (const label of before) expect(now.has(label), `call ${i}`).toBe(true);
        }
      }),
      { numRuns: 40 },
    );
  });

  it("never grant a call more once the run has seen more", async () => {
    await fc.assert(
      fc.asyncProperty(
        steps,
        fc.integer({ min: 0, max: CALLS.length - 1 }),
        async (plan, probe) => {
          // The same call asked at the start of a run and after the plan: never more authority later.
          const first = (await replay([{ call: probe }]))[0] as Verdict;
          const later = (await replay([...plan, { call: probe }])).at(-1) as Verdict;
          expect(rank(later)).toBeLessThanOrEqual(rank(first));
        },
      ),
      { numRuns: 30 },
    );
  });
});
