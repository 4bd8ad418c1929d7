import { create } from "@bufbuild/protobuf";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCharterClients, type CharterClients } from "../../src/client/index.js";
import { ActionCaveatsSchema, Decision } from "../../src/gen/charter/v1/common_pb.js";
import { serveProcess, type ServedProcess } from "../support/serve-process.js";

// Issue 22: a DelegateGrant caveat `^(a+)+$` and a 31-character argument held a worker for
// 15.6 s, and another client's call on it waited as long. The server runs as its own process
// (`charter serve`), so that on a backtracking engine the test itself is not frozen with it.

const dataDir = mkdtempSync(join(tmpdir(), "charter-pattern-time-"));
let served: ServedProcess;
let attacker: CharterClients;
let bystander: CharterClients;

beforeAll(async () => {
  served = await serveProcess({ dataDir });
  const address = served.address;
  // Two clients, two connections: the attacker's and another caller's.
  attacker = createCharterClients({ address });
  bystander = createCharterClients({ address });
});

afterAll(async () => {
  attacker.close();
  bystander.close();
  await served.kill();
  rmSync(dataDir, { recursive: true, force: true });
});

const DEADLINE_MS = 10_000;
const deadline = () => ({ timeoutMs: DEADLINE_MS });

async function issue(clients: CharterClients, subject: string): Promise<string> {
  const r = await clients.grants.issueGrant({
    profile: "owner-assistant",
    subject,
    owner: "ana@example.com",
    purpose: "pattern time",
  });
  return r.grantToken;
}

/** One of the bystander's calls: how long it took, in milliseconds. */
async function bystanderCall(token: string, i: number): Promise<number> {
  const start = performance.now();
  const r = await bystander.authority.authorize(
    {
      grantToken: token,
      call: { callId: `b${i}`, toolName: "web_search", argumentsJson: '{"query":"charter"}' },
    },
    deadline(),
  );
  expect(r.verdict?.decision).toBe(Decision.ALLOW);
  return performance.now() - start;
}

const median = (xs: readonly number[]) =>
  [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

describe("a DelegateGrant caveat ^(a+)+$ and a 10,000-character argument", () => {
  it("is accepted (RE2 runs it), denied promptly, and another client's calls are not held", async () => {
    const root = await issue(attacker, "agent:attacker");
    const { grantToken: childToken } = await attacker.grants.delegateGrant({
      parentToken: root,
      subject: "agent:attacker-child",
      allowed: ["email.draft"],
      caveats: {
        "email.draft": create(ActionCaveatsSchema, {
          constraintsJson: [
            JSON.stringify({ properties: { body: { type: "string", pattern: "^(a+)+$" } } }),
          ],
        }),
      },
    });
    const other = await issue(bystander, "agent:bystander");

    // The bystander's own baseline, on the quiet server.
    for (let i = 0; i < 5; i++) await bystanderCall(other, i);
    const baseline: number[] = [];
    for (let i = 0; i < 20; i++) baseline.push(await bystanderCall(other, i));

    // Rounds of: the attacker's pathological call, with the bystander's call sent right behind it.
    const during: number[] = [];
    const attack: number[] = [];
    for (let round = 0; round < 10; round++) {
      const start = performance.now();
      const hostile = attacker.authority
        .authorize(
          {
            grantToken: childToken,
            call: {
              callId: `a${round}`,
              toolName: "draft_email",
              argumentsJson: JSON.stringify({ subject: "s", body: `${"a".repeat(10_000)}!` }),
            },
          },
          deadline(),
        )
        .then((r) => {
          attack.push(performance.now() - start);
          return r;
        });
      during.push(await bystanderCall(other, 100 + round));
      const r = await hostile;
      expect(r.verdict?.reason?.code).toBe("CONSTRAINT_VIOLATION");
    }
    const ratio = median(during) / median(baseline);
    console.log(
      `bystander median ${median(baseline).toFixed(2)} ms alone, ${median(during).toFixed(2)} ms beside the attack (x${ratio.toFixed(2)}); attack median ${median(attack).toFixed(2)} ms`,
    );
    // Linear: a 10k-character check costs about what a call does. Backtracking: no answer at all.
    expect(ratio).toBeLessThan(20);
    expect(median(attack) / median(baseline)).toBeLessThan(50);
  }, 60_000);
});
