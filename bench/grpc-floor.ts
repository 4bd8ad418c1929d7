/**
 * The floor of `npm run bench:grpc`: what any authority must do per Authorize that answers only
 * once its record is durable and signs each allow with Ed25519 — and nothing else. A grpc-js
 * server like the baseline (fixed response bytes, no decoding, no logging) whose handler, for a
 * request it is told about, writes that many rows into a SQLite file (WAL, `synchronous = NORMAL`;
 * the rows queued in one turn of the event loop in one transaction, then one `fdatasync` of the
 * WAL on libuv's thread pool before any of them answers) and, for an allow, signs that many
 * receipt-sized payloads with `crypto.sign` on the thread pool, asked for with the row as Charter
 * asks for a receipt with its commit (the answer waits for both). The gap between the baseline and
 * the floor is what durability and signatures cost on this machine; the gap between the floor and
 * Charter is Charter's own work.
 *
 *   node dist-bench/bench/grpc-floor.js PORT WORKERS RESPONSES_JSON FLOOR_JSON DATA_DIR
 *
 * FLOOR_JSON maps the byte length of a request message to `{ rows, signs, signedBytes }` (the
 * bench's floored requests have distinct lengths, so the handler reads no more than the length);
 * any other request is answered as the baseline answers it.
 */
import Database from "better-sqlite3";
import { generateKeyPairSync, sign } from "node:crypto";
import { fdatasync, mkdirSync, openSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { serveRaw, type RawHandler } from "./grpc-raw-server.js";

/** What the floor does for one request. */
export interface FloorWork {
  /** Rows written durably before the answer. */
  readonly rows: number;
  /** Ed25519 signatures made while the rows are made durable. */
  readonly signs: number;
  /** The length of each signed payload (Charter's receipt signing input). */
  readonly signedBytes: number;
}

/** The bytes of each row: about a decision row and its audit row together. */
const ROW_BYTES = 640;

const [portText, workersText, responsesFile, floorFile, dataDir] = process.argv.slice(2);
serveRaw(
  "floor",
  Number(portText),
  Number(workersText ?? 1),
  responsesFile as string,
  floorHandler,
);

/** One serving process's handler: its database, its key and its group commit. */
function floorHandler(): RawHandler {
  const floor = new Map(
    Object.entries(
      JSON.parse(readFileSync(floorFile as string, "utf8")) as Record<string, FloorWork>,
    ).map(([length, work]) => [Number(length), work]),
  );
  mkdirSync(dataDir as string, { recursive: true });
  const file = join(dataDir as string, "floor.db");
  const db = new Database(file, { timeout: 5000 });
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.exec(
    "CREATE TABLE IF NOT EXISTS records (seq INTEGER PRIMARY KEY, worker INTEGER NOT NULL, body BLOB NOT NULL)",
  );
  const insert = db.prepare<[number, Buffer]>("INSERT INTO records (worker, body) VALUES (?, ?)");
  const commitGroup = db.transaction((rows: readonly Buffer[]) => {
    for (const body of rows) insert.run(process.pid, body);
  });
  const wal = openSync(`${file}-wal`, "r");
  const { privateKey } = generateKeyPairSync("ed25519");

  // The group commit: rows queued in one turn, one transaction, one fdatasync, then every answer.
  let queued: { rows: Buffer[]; done: (() => void)[] } | undefined;
  const durably = (body: Buffer, rows: number, done: () => void) => {
    if (queued === undefined) {
      const group = { rows: [] as Buffer[], done: [] as (() => void)[] };
      queued = group;
      setImmediate(() => {
        queued = undefined;
        commitGroup(group.rows);
        fdatasync(wal, (err) => {
          if (err) throw err;
          for (const d of group.done) d();
        });
      });
    }
    for (let i = 0; i < rows; i++) queued.rows.push(body);
    queued.done.push(done);
  };
  const payloads = new Map<number, Buffer>();
  const payloadOf = (work: FloorWork) => {
    let p = payloads.get(work.signedBytes);
    if (p === undefined) payloads.set(work.signedBytes, (p = Buffer.alloc(work.signedBytes, 97)));
    return p;
  };
  const signAll = (n: number, payload: Buffer, done: () => void) => {
    let left = n;
    if (left === 0) {
      done();
      return;
    }
    for (let i = 0; i < n; i++)
      sign(null, payload, privateKey, (err) => {
        if (err) throw err;
        if (--left === 0) done();
      });
  };

  return (request, answer) => {
    const work = floor.get(request.length);
    if (work === undefined) {
      answer();
      return;
    }
    // A row about as long as Charter's decision and audit rows together; the signatures made
    // while it is made durable, and the answer once both are done.
    let waiting = 2;
    const done = () => {
      if (--waiting === 0) answer();
    };
    durably(request.subarray(0, ROW_BYTES), work.rows, done);
    signAll(work.signs, payloadOf(work), done);
  };
}
