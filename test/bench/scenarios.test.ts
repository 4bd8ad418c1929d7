import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { coreBackend } from "../../bench/scenarios/backend.js";
import { SUITES } from "../../bench/scenarios/model.js";
import { MODES } from "../../bench/scenarios/modes.js";
import { checkTasks, replayAttack, replayTask } from "../../bench/scenarios/replay.js";
import { TASKS } from "../../bench/scenarios/tasks.js";
import { consequentialTools } from "../../bench/scenarios/endorse.js";
import { ENDORSED_TASKS } from "../../bench/scenarios/endorse-tasks.js";
import { boundsAccept } from "../../src/core/endorsement.js";
import type { JsonSchema } from "../../src/core/json.js";
import { demoPair } from "../support/demo.js";

// The scenario suite's data (bench/scenarios, issue 23), checked in process on the pure core:
// what `npm run bench:scenarios` replays through the server must be well-formed and valid.
describe("the scenario suite's tasks", () => {
  const dir = mkdtempSync(join(tmpdir(), "charter-scenarios-test-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const mode = (id: string) => {
    const m = MODES.find((x) => x.id === id);
    if (!m) throw new Error(`no mode ${id}`);
    return coreBackend(m.catalog(dir), m.policy(dir));
  };

  it("has at least 40 tasks over the four families, each with an injection variant", () => {
    expect(() => checkTasks(TASKS)).not.toThrow();
    for (const suite of SUITES)
      expect(TASKS.filter((t) => t.suite === suite).length).toBeGreaterThanOrEqual(10);
    const channels = new Set(TASKS.flatMap((t) => t.injections.map((i) => i.channel)));
    expect([...channels].sort()).toEqual(["file", "mail", "record", "web"]);
  });

  it("makes only calls the owner-assistant grant accepts: no benign call is denied without run rules", async () => {
    const b = mode("off");
    for (const task of TASKS) {
      const r = await replayTask(b, task, false);
      expect(
        r.calls.filter((c) => c.outcome === "denied").map((c) => `${c.tool}: ${c.code}`),
        task.id,
      ).toEqual([]);
    }
  });

  it("gives the attacker goals the rule-free policy allows on their own (external email aside)", async () => {
    const b = mode("off");
    for (const task of TASKS)
      for (const injection of task.injections) {
        const r = await replayAttack(b, task, injection, false);
        const id = `${task.id}.${injection.id}`;
        expect(
          r.calls.filter((c) => c.outcome === "denied").map((c) => c.code),
          id,
        ).toEqual([]);
        if (injection.kind !== "external email") expect(r.succeeded, id).toBe(true);
      }
  });
});

describe("the endorsement workload's tasks", () => {
  const dir = mkdtempSync(join(tmpdir(), "charter-endorse-test-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("makes only calls the grant accepts, and each endorsement accepts its first held call", async () => {
    const off = MODES.find((x) => x.id === "off");
    if (!off) throw new Error("no mode off");
    const b = coreBackend(off.catalog(dir), off.policy(dir));
    const { catalog } = demoPair();
    for (const task of ENDORSED_TASKS) {
      const r = await replayTask(b, task, false);
      expect(
        r.calls.filter((c) => c.outcome === "denied").map((c) => c.code),
        task.id,
      ).toEqual([]);
      const held = task.calls.filter((c) => consequentialTools().has(c.tool));
      expect(held.length, task.id).toBeGreaterThanOrEqual(10);
      for (const call of held)
        expect(
          boundsAccept(catalog, task.endorsement.bounds as JsonSchema, call.args),
          task.id,
        ).toBe(true);
    }
  });
});
