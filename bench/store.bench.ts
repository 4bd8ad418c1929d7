/**
 * The store's share of Authorize: the same round trip on the embedded SQLite store and on
 * PostgreSQL, measured in the same run (read the ratios vitest prints, never absolute times).
 * Needs the PostgreSQL of test/support/postgres.ts; skipped with a message when it is unreachable.
 *
 *   npx vitest bench --run bench/store.bench.ts
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, bench, describe } from "vitest";
import { openPostgresStore, openSqliteStore, type Store } from "../src/store/index.js";
import { makeDecision } from "../test/store/fixtures.js";
import { startTestCharter, type TestCharter } from "../test/support/charter-server.js";
import { POSTGRES, testSchema } from "../test/support/postgres.js";

const schema = testSchema("bench");
const suite = POSTGRES.reachable ? describe : describe.skip;
if (!POSTGRES.reachable)
  console.warn(`SKIPPED the store benchmark: PostgreSQL is unreachable (${POSTGRES.reason})`);

const refund = JSON.stringify({
  order_id: "ord_A1B2C3",
  amount: 40,
  currency: "EUR",
  reason: "damaged",
});
let sqlite: TestCharter;
let postgres: TestCharter;
let sqliteToken: string;
let postgresToken: string;
let sqliteStore: Store;
let postgresStore: Store;
let n = 0;
const dir = mkdtempSync(join(tmpdir(), "charter-store-bench-"));

beforeAll(async () => {
  if (!POSTGRES.reachable) return;
  await schema.create();
  sqlite = await startTestCharter();
  postgres = await startTestCharter({ config: { database: schema.url } });
  const issue = async (c: TestCharter) =>
    (
      await c.clients.grants.issueGrant({
        profile: "owner-assistant",
        subject: "agent:bench",
        owner: "ana",
        purpose: "bench",
      })
    ).grantToken;
  sqliteToken = await issue(sqlite);
  postgresToken = await issue(postgres);
  sqliteStore = await openSqliteStore({ file: join(dir, "charter.db") });
  postgresStore = await openPostgresStore({ url: schema.url });
});

afterAll(async () => {
  if (!POSTGRES.reachable) return;
  await Promise.all([sqlite.stop(), postgres.stop(), sqliteStore.close(), postgresStore.close()]);
  await schema.drop();
  rmSync(dir, { recursive: true, force: true });
});

const authorize = (c: TestCharter, grantToken: string) =>
  c.clients.authority.authorize({
    grantToken,
    call: { callId: `c${n++}`, toolName: "issue_refund", argumentsJson: refund },
  });

suite("an Authorize round trip (allow: revocation check, commit, receipt) by store", () => {
  bench("on SQLite (baseline)", async () => {
    await authorize(sqlite, sqliteToken);
  });
  bench("on PostgreSQL", async () => {
    await authorize(postgres, postgresToken);
  });
});

suite("commitDecision alone (one SERIALIZABLE transaction on PostgreSQL) by store", () => {
  bench("on a SQLite file, WAL (baseline)", async () => {
    await sqliteStore.commitDecision(makeDecision(`dec_s${n++}`));
  });
  bench("on PostgreSQL", async () => {
    await postgresStore.commitDecision(makeDecision(`dec_p${n++}`));
  });
});
