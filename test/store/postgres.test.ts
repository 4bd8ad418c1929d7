import { afterAll, beforeAll } from "vitest";
import { openPostgresStore } from "../../src/store/index.js";
import { describePostgres, testSchema } from "../support/postgres.js";
import { describeStoreContract } from "./contract.js";

// The same contract as test/store/sqlite.test.ts, on PostgreSQL, in a schema of this file's own:
// created before the tests, emptied after each, dropped at the end.
describePostgres("PostgreSQL store", () => {
  const schema = testSchema("contract");
  beforeAll(() => schema.create());
  afterAll(() => schema.drop());

  describeStoreContract({
    name: "postgres",
    open: () => openPostgresStore({ url: schema.url }),
    cleanup: () => schema.truncate(),
  });
});
