import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chainHash } from "../../src/core/audit-chain.js";
import { FIXTURES, startTestCharter } from "../support/charter-server.js";
import { runCapture, type CliRun } from "../support/cli.js";

// Issue 22 finding 4: whoever can write the store, without the signing key, could cut the log back
// to an earlier checkpoint, or turn a deny into an allow, recompute the later hashes and delete the
// later checkpoints, and `charter audit verify` said "ok". A real server writes its checkpoints to
// a witness file outside the data dir; `verify --witness` catches both; archiving keeps verify green.
const base = mkdtempSync(join(tmpdir(), "charter-witness-"));
const pristine = join(base, "pristine");
const outside = join(base, "outside");
const witnessFile = join(outside, "witness.jsonl");

interface Checkpoint {
  seq: number;
  hash: string;
}
let checkpoints: Checkpoint[] = [];
let records = 0;

beforeAll(async () => {
  mkdirSync(outside, { mode: 0o700 });
  const charter = await startTestCharter({
    dataDir: pristine,
    config: { auditWitnessFile: witnessFile, auditCheckpointRecords: 5 },
  });
  try {
    const { grantToken } = await charter.clients.grants.issueGrant({
      profile: "owner-assistant",
      subject: "agent:a",
      owner: "ana@example.com",
      purpose: "witness",
    });
    for (let i = 0; i < 24; i++) {
      const denied = i % 4 === 3;
      await charter.clients.authority.authorize({
        grantToken,
        call: {
          callId: `c${i}`,
          toolName: denied ? "delete_file" : "web_search",
          argumentsJson: JSON.stringify(denied ? { path: "/workspace/x" } : { query: `q${i}` }),
        },
      });
      // The checkpointer signs in the background: let it catch up now and then.
      if (i % 5 === 4) await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    // Stopping signs a last checkpoint of the head.
    await charter.stop({ keepData: true });
  }
  const db = new Database(join(pristine, "charter.db"), { readonly: true });
  try {
    checkpoints = db
      .prepare<[], Checkpoint>("SELECT seq, hash FROM audit_checkpoints ORDER BY seq")
      .all();
    records = db.prepare<[], number>("SELECT max(seq) FROM audit_log").pluck().get() ?? 0;
  } finally {
    db.close();
  }
});
afterAll(() => rmSync(base, { recursive: true, force: true }));

const cli = (dataDir: string, args: string[], env: Record<string, string> = {}): Promise<CliRun> =>
  runCapture(
    [
      ...args,
      "--catalog",
      join(FIXTURES, "catalog.yaml"),
      "--policy",
      join(FIXTURES, "policy.yaml"),
      "--data-dir",
      dataDir,
    ],
    env,
  );

let copies = 0;
/** A copy of the pristine data dir (and of the witness file) with `tamper` applied to its database. */
function copy(tamper: (db: Database.Database) => void = () => undefined): {
  dir: string;
  witness: string;
} {
  const n = copies++;
  const dir = join(base, `copy-${n}`);
  cpSync(pristine, dir, { recursive: true });
  const witness = join(outside, `witness-${n}.jsonl`);
  cpSync(witnessFile, witness);
  const db = new Database(join(dir, "charter.db"));
  try {
    tamper(db);
  } finally {
    db.close();
  }
  return { dir, witness };
}

/** Rewrites record `seq` with `edit`, then every later record's hash, as an attacker without the key can. */
function rewriteFrom(db: Database.Database, seq: number, edit: (entry: string) => string): void {
  let previous =
    db
      .prepare<[number], string>("SELECT hash FROM audit_log WHERE seq = ?")
      .pluck()
      .get(seq - 1) ?? "";
  const rows = db
    .prepare<[number], { seq: number; entry: string }>(
      "SELECT seq, entry FROM audit_log WHERE seq >= ? ORDER BY seq",
    )
    .all(seq);
  for (const row of rows) {
    const entry = row.seq === seq ? edit(row.entry) : row.entry;
    previous = chainHash(previous, entry);
    db.prepare("UPDATE audit_log SET entry = ?, hash = ? WHERE seq = ?").run(
      entry,
      previous,
      row.seq,
    );
  }
}

const verify = (dir: string, ...extra: string[]) => cli(dir, ["audit", "verify", ...extra]);

describe("the witness of a real server", () => {
  it("holds every checkpoint the server signed, and verify --witness passes on the intact log", async () => {
    expect(checkpoints.length).toBeGreaterThanOrEqual(3);
    expect(checkpoints.at(-1)?.seq).toBe(records);
    const lines = readFileSync(witnessFile, "utf8").trim().split("\n");
    expect(lines.map((l) => (JSON.parse(l) as Checkpoint).seq)).toEqual(
      checkpoints.map((c) => c.seq),
    );
    const r = await verify(pristine, "--witness", witnessFile);
    expect(r.out).toContain(
      `audit log ok: ${records} records, ${checkpoints.length} signed checkpoints`,
    );
    expect(r.out).toContain(`witness: ${checkpoints.length} witnessed checkpoints match`);
    expect(r.code).toBe(0);
  });
});

describe("the attacks of finding 4", () => {
  it("truncation back to an earlier checkpoint: plain verify passes, --witness fails naming the checkpoint", async () => {
    const keep = checkpoints[0]?.seq ?? 0;
    const { dir, witness } = copy((db) => {
      db.prepare("DELETE FROM audit_log WHERE seq > ?").run(keep);
      db.prepare("DELETE FROM audit_checkpoints WHERE seq > ?").run(keep);
    });
    const plain = await verify(dir);
    // The gap: without a witness this looks like a shorter, intact log.
    expect(plain).toMatchObject({ code: 0 });
    expect(plain.out).toContain(`audit log ok: ${keep} records`);
    const witnessed = await verify(dir, "--witness", witness);
    expect(witnessed.code).toBe(1);
    const next = checkpoints[1]?.seq ?? 0;
    expect(witnessed.out).toContain(
      `audit log broken at record ${keep + 1}: witnessed checkpoint ${next} (witness line 2) covers record ${next}, but the log ends at record ${keep}: records ${keep + 1} to ${next} were cut off`,
    );
  });

  it("a deny turned into an allow, later hashes recomputed, later checkpoints deleted: --witness fails", async () => {
    const first = checkpoints[0]?.seq ?? 0;
    let flipped = 0;
    const { dir, witness } = copy((db) => {
      flipped =
        db
          .prepare<[number], number>(
            `SELECT seq FROM audit_log WHERE seq > ? AND entry LIKE '%"decision":"deny"%' ORDER BY seq LIMIT 1`,
          )
          .pluck()
          .get(first) ?? 0;
      rewriteFrom(db, flipped, (e) => e.replace('"decision":"deny"', '"decision":"allow"'));
      db.prepare("DELETE FROM audit_checkpoints WHERE seq >= ?").run(flipped);
    });
    expect(flipped).toBeGreaterThan(first);
    expect(flipped).toBeLessThan(records);
    const plain = await verify(dir);
    expect(plain).toMatchObject({ code: 0 });
    expect(plain.out).toContain(`audit log ok: ${records} records`);
    const lost = checkpoints.find((c) => c.seq >= flipped)?.seq ?? 0;
    const line = checkpoints.findIndex((c) => c.seq >= flipped) + 1;
    const witnessed = await verify(dir, "--witness", witness);
    expect(witnessed.code).toBe(1);
    expect(witnessed.out).toContain(
      `audit log broken at record ${lost}: witnessed checkpoint ${lost} (witness line ${line}) is missing from the store`,
    );
  });

  it("records removed from the front without a witnessed archive run: --witness fails", async () => {
    const anchor = checkpoints[1]?.seq ?? 0;
    const { dir, witness } = copy((db) => {
      db.prepare("DELETE FROM audit_log WHERE seq < ?").run(anchor);
      db.prepare("DELETE FROM audit_checkpoints WHERE seq < ?").run(anchor);
    });
    expect(await verify(dir)).toMatchObject({ code: 0 });
    const witnessed = await verify(dir, "--witness", witness);
    expect(witnessed.code).toBe(1);
    expect(witnessed.out).toContain(
      `the log starts at record ${anchor}, before which the witness holds checkpoint ${checkpoints[0]?.seq ?? 0}, but no witnessed archive run ends at record ${anchor}`,
    );
  });

  it("a witness line with a forged signature fails", async () => {
    const { dir, witness } = copy();
    const lines = readFileSync(witness, "utf8").trim().split("\n");
    const cp = JSON.parse(lines[0] ?? "{}") as { seq: number; hash: string; signature: string };
    lines[0] = JSON.stringify({ ...cp, hash: "0".repeat(64) });
    writeFileSync(witness, `${lines.join("\n")}\n`);
    const r = await verify(dir, "--witness", witness);
    expect(r.code).toBe(1);
    expect(r.out).toContain(
      `witnessed checkpoint ${cp.seq} (witness line 1) does not carry a valid signature`,
    );
  });
});

describe("charter audit archive", () => {
  it("moves whole segments to the archive; verify, --witness and --archive still pass", async () => {
    const { dir, witness } = copy();
    const archive = join(base, "archive-ok.jsonl");
    const anchor = checkpoints[1]?.seq ?? 0;
    const r = await cli(
      dir,
      ["audit", "archive", "--before", String(anchor + 1), "--archive", archive],
      {
        CHARTER_AUDIT_WITNESS_FILE: witness,
      },
    );
    expect(r.out).toContain(
      `archived records 1 to ${anchor} to ${archive}; ${anchor - 1} records and 1 checkpoints pruned, the log now starts at record ${anchor}`,
    );
    expect(r.code).toBe(0);
    const plain = await verify(dir);
    expect(plain.out).toContain(
      `records 1 to ${anchor - 1} are archived: the log starts at record ${anchor}`,
    );
    expect(plain.code).toBe(0);
    const witnessed = await verify(dir, "--witness", witness);
    expect(witnessed.out).toContain(
      "witness: 1 witnessed checkpoints are archived (give --archive to check them)",
    );
    expect(witnessed.code).toBe(0);
    const full = await verify(dir, "--witness", witness, "--archive", archive);
    expect(full.out).toContain(`witness: ${checkpoints.length} witnessed checkpoints match`);
    expect(full.out).toContain(`archive: ${anchor - 1} archived records join the kept log`);
    expect(full.code).toBe(0);

    // A second run appends to the same archive, which still joins the kept log.
    const later = checkpoints[2]?.seq ?? 0;
    const again = await cli(
      dir,
      ["audit", "archive", "--before", String(later), "--archive", archive],
      {
        CHARTER_AUDIT_WITNESS_FILE: witness,
      },
    );
    expect(again.code).toBe(0);
    const after = await verify(dir, "--witness", witness, "--archive", archive);
    expect(after.out).toContain(`archive: ${later - 1} archived records join the kept log`);
    expect(after.code).toBe(0);
  });

  it("takes an ISO time: the segments whose checkpoint was signed by then", async () => {
    const { dir, witness } = copy();
    const archive = join(base, "archive-time.jsonl");
    const r = await cli(
      dir,
      [
        "audit",
        "archive",
        "--before",
        new Date(Date.now() + 60_000).toISOString(),
        "--archive",
        archive,
      ],
      { CHARTER_AUDIT_WITNESS_FILE: witness },
    );
    expect(r.out).toContain(`the log now starts at record ${records}`);
    expect(r.code).toBe(0);
    const full = await verify(dir, "--witness", witness, "--archive", archive);
    expect(full.out).toContain(`archive: ${records - 1} archived records join the kept log`);
    expect(full.code).toBe(0);
  });

  it("a tampered archive fails verify --archive", async () => {
    const { dir, witness } = copy();
    const archive = join(base, "archive-bad.jsonl");
    const anchor = checkpoints[1]?.seq ?? 0;
    const r = await cli(
      dir,
      ["audit", "archive", "--before", String(anchor), "--archive", archive],
      {
        CHARTER_AUDIT_WITNESS_FILE: witness,
      },
    );
    expect(r.code).toBe(0);
    const text = readFileSync(archive, "utf8");
    expect(text).toContain('\\"decision\\":\\"deny\\"');
    writeFileSync(archive, text.replace('\\"decision\\":\\"deny\\"', '\\"decision\\":\\"allow\\"'));
    const bad = await verify(dir, "--witness", witness, "--archive", archive);
    expect(bad.code).toBe(1);
    expect(bad.out).toMatch(
      /audit log broken at record 0: archived record \d+ does not match its hash/,
    );
  });

  it("refuses a point before which there is no checkpoint, and a bad --before, changing nothing", async () => {
    const { dir } = copy();
    const archive = join(base, "archive-none.jsonl");
    const none = await cli(dir, ["audit", "archive", "--before", "1", "--archive", archive]);
    expect(none.code).not.toBe(0);
    expect(none.err).toContain(
      "no signed checkpoint at or before record 1 past the log's first record: nothing to archive",
    );
    const bad = await cli(dir, ["audit", "archive", "--before", "yesterday", "--archive", archive]);
    expect(bad.code).not.toBe(0);
    expect(bad.err).toContain(
      '--before must be a checkpoint\'s record seq or an ISO 8601 time, got "yesterday"',
    );
    const old = await cli(dir, [
      "audit",
      "archive",
      "--before",
      "2001-01-01T00:00:00Z",
      "--archive",
      archive,
    ]);
    expect(old.err).toContain("no signed checkpoint signed at or before 2001-01-01T00:00:00.000Z");
    expect(await verify(dir)).toMatchObject({ code: 0 });
    expect((await verify(dir)).out).toContain(`audit log ok: ${records} records`);
  });

  it("refuses a witness file inside the data dir", async () => {
    const { dir } = copy();
    const r = await cli(dir, ["audit", "verify"], {
      CHARTER_AUDIT_WITNESS_FILE: join(dir, "witness.jsonl"),
    });
    expect(r.code).not.toBe(0);
    expect(r.err).toContain(
      `auditWitnessFile ${join(dir, "witness.jsonl")} is inside the data dir`,
    );
  });
});
