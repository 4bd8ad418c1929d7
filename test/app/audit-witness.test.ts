import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { createAuditWitness, type AuditWitness } from "../../src/app/audit-witness.js";
import { createAppContext } from "../../src/app/context.js";
import { authorize, issueGrant } from "../../src/authority/index.js";
import { DEFAULTS } from "../../src/config/config.js";
import { createMetrics } from "../../src/telemetry/metrics.js";
import { FIXTURES, startTestCharter } from "../support/charter-server.js";
import { memoryLog } from "../support/memory-log.js";

// The witnesses outside the store: an append-only file (0600, O_APPEND, fsync'd) refused inside the
// data dir, and a command fed each checkpoint on stdin whose failures are logged, counted and
// retried, and never hold up a decision.
const base = mkdtempSync(join(tmpdir(), "charter-witness-app-"));
const dataDir = join(base, "data");
mkdirSync(dataDir, { mode: 0o700 });
afterAll(() => rmSync(base, { recursive: true, force: true }));

const open: AuditWitness[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((w) => w.close()));
});

let dirs = 0;
const fresh = () => {
  const dir = join(base, `w${dirs++}`);
  mkdirSync(dir);
  return dir;
};
const cp = (seq: number) => ({ seq, hash: `h${seq}`, at: 1000 + seq, signature: `jws-${seq}` });

function witness(
  options: Partial<Parameters<typeof createAuditWitness>[0]>,
  errors: string[] = [],
) {
  const w = createAuditWitness({
    file: "",
    command: [],
    dataDir,
    onError: (m) => errors.push(m),
    ...options,
  });
  if (w === undefined) throw new Error("no witness");
  open.push(w);
  return w;
}

describe("the witness file", () => {
  it("is created 0600 and appended to, one JSON line per checkpoint, keeping what it held", async () => {
    const file = join(fresh(), "witness.jsonl");
    writeFileSync(file, '{"seq":1,"hash":"h1","at":1,"signature":"s"}\n', { mode: 0o600 });
    const w = witness({ file });
    await w.witness(cp(5));
    await w.witness(cp(9));
    expect(readFileSync(file, "utf8").trim().split("\n")).toEqual([
      '{"seq":1,"hash":"h1","at":1,"signature":"s"}',
      JSON.stringify(cp(5)),
      JSON.stringify(cp(9)),
    ]);
    const created = join(fresh(), "new.jsonl");
    await witness({ file: created }).witness(cp(1));
    expect(statSync(created).mode & 0o777).toBe(0o600);
  });

  it("is refused inside the data dir, when others may write it, and when its directory is missing", () => {
    expect(() => witness({ file: join(dataDir, "w.jsonl") })).toThrow(/is inside the data dir/);
    expect(() => witness({ file: join(dataDir, "sub", "..", "w.jsonl") })).toThrow(
      /is inside the data dir/,
    );
    const shared = join(fresh(), "shared.jsonl");
    writeFileSync(shared, "");
    chmodSync(shared, 0o666);
    expect(() => witness({ file: shared })).toThrow(/can be written by other users \(mode 0666\)/);
    expect(() => witness({ file: join(base, "nope", "w.jsonl") })).toThrow(/does not exist/);
  });

  it("is written to by the application context's checkpointer", async () => {
    const file = join(fresh(), "ctx.jsonl");
    const ctx = await createAppContext({
      ...DEFAULTS,
      dataDir: join(base, "ctx-data"),
      catalog: join(FIXTURES, "catalog.yaml"),
      policy: join(FIXTURES, "policy.yaml"),
      auditWitnessFile: file,
    });
    try {
      await issueGrant(ctx, { profile: "owner-assistant", subject: "a", owner: "o", purpose: "p" });
      const signed = await ctx.audit.checkpoint();
      expect(signed?.seq).toBe(1);
      expect(JSON.parse(readFileSync(file, "utf8").trim()) as unknown).toEqual(signed);
    } finally {
      await ctx.close();
    }
  });
});

describe("the witness command", () => {
  it("gets each checkpoint on stdin", async () => {
    const out = join(fresh(), "out.jsonl");
    const w = witness({ command: ["sh", "-c", `cat >> '${out}'`] });
    await w.witness(cp(3));
    expect(readFileSync(out, "utf8")).toBe(`${JSON.stringify(cp(3))}\n`);
    expect(w.failures()).toBe(0);
    // An archive run goes to the command too, so a witness kept by the command alone can tell it from a cut.
    await w.archived({ anchor: 3, hash: "h3", at: 9 });
    expect(readFileSync(out, "utf8")).toContain('{"archivedBefore":3,"hash":"h3","at":9}\n');
  });

  it("a failure is reported and counted, and retried at the next checkpoint", async () => {
    const dir = fresh();
    const out = join(dir, "out.jsonl");
    const ok = join(dir, "ok");
    const errors: string[] = [];
    const w = witness(
      { command: ["sh", "-c", `[ -f '${ok}' ] || exit 3; cat >> '${out}'`] },
      errors,
    );
    await w.witness(cp(3));
    expect(w.failures()).toBe(1);
    expect(errors).toEqual([
      "audit witness command sh failed (exit code 3); 1 checkpoint(s) will be retried at the next checkpoint",
    ]);
    writeFileSync(ok, "");
    await w.witness(cp(7));
    expect(readFileSync(out, "utf8")).toBe(`${JSON.stringify(cp(3))}\n${JSON.stringify(cp(7))}\n`);
    expect(w.failures()).toBe(1);
  });

  it("a run past its timeout is killed and counted; a missing program too", async () => {
    const errors: string[] = [];
    const slow = witness({ command: ["sleep", "30"], commandTimeoutMs: 200 }, errors);
    const started = Date.now();
    await slow.witness(cp(1));
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(errors[0]).toContain("timed out after 200 ms");
    const missing = witness({ command: [join(base, "no-such-program")] }, errors);
    await missing.witness(cp(1));
    expect(missing.failures()).toBe(1);
    expect(errors[1]).toContain("ENOENT");
  });

  it("a failing command does not stop decisions: every call is answered and checkpointed", async () => {
    const errors: string[] = [];
    const ctx = await createAppContext(
      {
        ...DEFAULTS,
        dataDir: join(base, "failing-data"),
        catalog: join(FIXTURES, "catalog.yaml"),
        policy: join(FIXTURES, "policy.yaml"),
        auditWitnessCommand: '["sh","-c","exit 1"]',
        auditCheckpointRecords: 1,
      },
      { error: (m) => errors.push(m) },
    );
    try {
      const { token } = await issueGrant(ctx, {
        profile: "owner-assistant",
        subject: "a",
        owner: "o",
        purpose: "p",
      });
      for (let i = 0; i < 5; i++) {
        const decided = await authorize(ctx, {
          grantToken: token,
          call: {
            callId: `c${i}`,
            toolName: "web_search",
            actionId: "",
            argumentsJson: '{"query":"q"}',
          },
        });
        expect(decided.verdict.decision).toBe("allow");
      }
      // A checkpoint still signing in the background answers for this call: ask until the head is covered.
      for (let i = 0; i < 20 && (await ctx.store.listCheckpoints()).at(-1)?.seq !== 6; i++)
        await ctx.audit.checkpoint();
      expect((await ctx.store.listCheckpoints()).at(-1)?.seq).toBe(6);
      expect(ctx.auditWitness?.failures()).toBeGreaterThanOrEqual(1);
      expect(errors[0]).toMatch(/^audit witness command sh failed \(exit code 1\)/);
    } finally {
      await ctx.close();
    }
  });

  it("on a real server: a failing command is logged at error while every call is answered", async () => {
    const memory = memoryLog();
    const charter = await startTestCharter({
      log: memory.log,
      config: { auditWitnessCommand: '["sh","-c","exit 2"]', auditCheckpointRecords: 2 },
    });
    try {
      const { grantToken } = await charter.clients.grants.issueGrant({
        profile: "owner-assistant",
        subject: "agent:a",
        owner: "ana@example.com",
        purpose: "witness down",
      });
      for (let i = 0; i < 6; i++) {
        const { verdict } = await charter.clients.authority.authorize({
          grantToken,
          call: { callId: `c${i}`, toolName: "web_search", argumentsJson: '{"query":"q"}' },
        });
        expect(verdict?.decision).toBeDefined();
      }
      let failed: Record<string, unknown> | undefined;
      for (let i = 0; i < 200 && failed === undefined; i++) {
        failed = memory.lines().find((l) => l["event"] === "audit.witness_failed");
        if (failed === undefined) await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(failed).toMatchObject({ level: 50 });
      expect(String(failed?.["msg"])).toMatch(/^audit witness command sh failed \(exit code 2\)/);
      expect((await charter.server.context.store.listCheckpoints()).length).toBeGreaterThan(0);
    } finally {
      await charter.stop();
    }
  });
});

describe("charter_audit_witness_failures_total", () => {
  it("reports the witness's failure count at each scrape", async () => {
    let failures = 2;
    const { registry } = createMetrics({ witnessFailures: () => failures });
    expect(await registry.metrics()).toContain("charter_audit_witness_failures_total 2");
    failures = 5;
    expect(await registry.metrics()).toContain("charter_audit_witness_failures_total 5");
  });
});
