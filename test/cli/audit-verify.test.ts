import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAppContext } from "../../src/app/context.js";
import { authorize, issueGrant } from "../../src/authority/index.js";
import { DEFAULTS, type CharterConfig } from "../../src/config/config.js";
import { FIXTURES } from "../support/charter-server.js";
import { runCapture, type CliRun } from "../support/cli.js";

// `charter audit verify` over a real log: intact it passes; editing, deleting or reordering one
// record, or cutting records off the end, is detected and the record is named.
const base = mkdtempSync(join(tmpdir(), "charter-audit-"));
const pristine = join(base, "pristine");
const config = (dataDir: string): CharterConfig => ({
  ...DEFAULTS,
  dataDir,
  catalog: join(FIXTURES, "catalog.yaml"),
  policy: join(FIXTURES, "policy.yaml"),
});
const RECORDS = 12;

beforeAll(async () => {
  const ctx = await createAppContext(config(pristine));
  try {
    const { token } = await issueGrant(ctx, {
      profile: "owner-assistant",
      subject: "agent:a",
      owner: "ana@example.com",
      purpose: "audit",
      requestedActions: [],
    });
    for (let i = 0; i < RECORDS - 2; i++) {
      await authorize(ctx, {
        grantToken: token,
        call: {
          callId: `c${i}`,
          toolName: "web_search",
          actionId: "",
          argumentsJson: JSON.stringify({ query: `secret-query-${i}` }),
        },
      });
    }
    // One more record after a checkpoint: the checkpoint covers record RECORDS - 1.
    await ctx.audit.checkpoint();
    await authorize(ctx, {
      grantToken: token,
      call: {
        callId: "last",
        toolName: "web_search",
        actionId: "",
        argumentsJson: JSON.stringify({ query: "q" }),
      },
    });
  } finally {
    await ctx.close();
  }
});
afterAll(() => rmSync(base, { recursive: true, force: true }));

const cli = (dataDir: string, ...args: string[]): Promise<CliRun> =>
  runCapture([
    ...args,
    "--catalog",
    join(FIXTURES, "catalog.yaml"),
    "--policy",
    join(FIXTURES, "policy.yaml"),
    "--data-dir",
    dataDir,
  ]);

/** A copy of the pristine log with `tamper` applied to its database. */
let copies = 0;
function tampered(tamper: (db: Database.Database) => void): string {
  const dir = join(base, `copy-${copies++}`);
  cpSync(pristine, dir, { recursive: true });
  const db = new Database(join(dir, "charter.db"));
  try {
    tamper(db);
  } finally {
    db.close();
  }
  return dir;
}

const entryOf = (db: Database.Database, seq: number) =>
  db.prepare<[number], string>("SELECT entry FROM audit_log WHERE seq = ?").pluck().get(seq) ?? "";

describe("charter audit verify", () => {
  it("passes on an intact log, with its checkpoint", async () => {
    const r = await cli(pristine, "audit", "verify");
    expect(r).toMatchObject({ code: 0 });
    expect(r.out).toMatch(new RegExp(`^audit log ok: ${RECORDS} records, 1 signed checkpoints`));
  });

  it("names a record whose content was edited", async () => {
    const dir = tampered((db) =>
      db
        .prepare("UPDATE audit_log SET entry = ? WHERE seq = 5")
        .run(entryOf(db, 5).replace('"decision":"allow"', '"decision":"deny"')),
    );
    const r = await cli(dir, "audit", "verify");
    expect(r.code).toBe(1);
    expect(r.out).toContain("audit log broken at record 5: record 5 does not match its hash");
  });

  it("names the next record when one was edited and re-hashed", async () => {
    const { chainHash } = await import("../../src/core/audit-chain.js");
    const dir = tampered((db) => {
      const previous =
        db.prepare<[], string>("SELECT hash FROM audit_log WHERE seq = 4").pluck().get() ?? "";
      const edited = entryOf(db, 5).replace('"decision":"allow"', '"decision":"deny"');
      db.prepare("UPDATE audit_log SET entry = ?, hash = ? WHERE seq = 5").run(
        edited,
        chainHash(previous, edited),
      );
    });
    const r = await cli(dir, "audit", "verify");
    expect(r.code).toBe(1);
    expect(r.out).toContain(
      "audit log broken at record 6: record 6 does not match its hash (its content was edited, or record 5 before it was)",
    );
  });

  it("names a deleted record", async () => {
    const dir = tampered((db) => db.prepare("DELETE FROM audit_log WHERE seq = 7").run());
    const r = await cli(dir, "audit", "verify");
    expect(r.code).toBe(1);
    expect(r.out).toContain(
      "audit log broken at record 7: record 7 is missing (record 6 is followed by record 8)",
    );
  });

  it("names records that were reordered", async () => {
    const dir = tampered((db) => {
      const [e3, e4] = [entryOf(db, 3), entryOf(db, 4)];
      db.prepare("UPDATE audit_log SET entry = ? WHERE seq = 3").run(e4);
      db.prepare("UPDATE audit_log SET entry = ? WHERE seq = 4").run(e3);
    });
    const r = await cli(dir, "audit", "verify");
    expect(r.code).toBe(1);
    expect(r.out).toContain("audit log broken at record 3: record 3 holds the content of record 4");
  });

  it("detects records cut off the end that a signed checkpoint covers", async () => {
    const dir = tampered((db) => db.prepare("DELETE FROM audit_log WHERE seq >= 9").run());
    const r = await cli(dir, "audit", "verify");
    expect(r.code).toBe(1);
    expect(r.out).toContain(
      `audit log broken at record 9: records 9 to ${RECORDS - 1} are missing from the end of the log`,
    );
  });

  it("refuses a checkpoint whose signature does not verify", async () => {
    const dir = tampered((db) => db.prepare("UPDATE audit_checkpoints SET hash = 'f00'").run());
    const r = await cli(dir, "audit", "verify");
    expect(r.code).toBe(1);
    expect(r.out).toContain(
      `the checkpoint of record ${RECORDS - 1} does not carry a valid signature`,
    );
  });
});

describe("charter audit export and tail", () => {
  it("writes JSONL with every record and no argument value", async () => {
    const file = join(base, "export.jsonl");
    const r = await cli(pristine, "audit", "export", "--out", file);
    expect(r).toMatchObject({ code: 0 });
    expect(r.err).toContain(`exported ${RECORDS} records`);
    const lines = readFileSync(file, "utf8").trim().split("\n");
    expect(lines).toHaveLength(RECORDS);
    expect(lines.map((l) => (JSON.parse(l) as { seq: number }).seq)).toEqual(
      Array.from({ length: RECORDS }, (_, i) => i + 1),
    );
    expect(readFileSync(file, "utf8")).not.toContain("secret-query");
  });

  it("tail prints the last records", async () => {
    const r = await cli(pristine, "audit", "tail", "--lines", "2", "--count", "2");
    expect(r.code).toBe(0);
    expect(
      r.out
        .trim()
        .split("\n")
        .map((l) => (JSON.parse(l) as { seq: number }).seq),
    ).toEqual([RECORDS - 1, RECORDS]);
  });
});
