import { describe, expect, it } from "vitest";
import { latestVersion, pendingMigrations, type Migration } from "../../src/store/migrate.js";
import { StoreError } from "../../src/store/port.js";

const LIST: Migration[] = [
  { version: 1, name: "one", sql: "" },
  { version: 2, name: "two", sql: "" },
  { version: 3, name: "three", sql: "" },
];

function storeErrorOf(fn: () => unknown): StoreError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(StoreError);
    return err as StoreError;
  }
  return expect.unreachable("expected a StoreError");
}

describe("pendingMigrations()", () => {
  it("answers every migration for a fresh database and none for an up-to-date one", () => {
    expect(pendingMigrations(LIST, [])).toEqual(LIST);
    expect(pendingMigrations(LIST, LIST)).toEqual([]);
  });

  it("answers the migrations after the recorded ones, in order, whatever the record order", () => {
    expect(pendingMigrations(LIST, [LIST[0] as Migration]).map((m) => m.version)).toEqual([2, 3]);
    expect(
      pendingMigrations(LIST, [
        { version: 2, name: "two" },
        { version: 1, name: "one" },
      ]),
    ).toEqual([LIST[2]]);
  });

  it("refuses a database from a newer code base as CORRUPT", () => {
    const err = storeErrorOf(() =>
      pendingMigrations(LIST, [...LIST, { version: 4, name: "four" }]),
    );
    expect(err).toMatchObject({
      code: "CORRUPT",
      message: "database schema version 4 is newer than this Charter (3)",
    });
  });

  it("refuses a recorded history with a gap or another name as CORRUPT", () => {
    expect(storeErrorOf(() => pendingMigrations(LIST, [{ version: 2, name: "two" }])).code).toBe(
      "CORRUPT",
    );
    const renamed = storeErrorOf(() => pendingMigrations(LIST, [{ version: 1, name: "uno" }]));
    expect(renamed).toMatchObject({
      code: "CORRUPT",
      message: expect.stringContaining('"uno"') as unknown,
    });
  });

  it("rejects a migration list whose versions do not run 1, 2, 3…", () => {
    expect(() => pendingMigrations([{ version: 2, name: "two", sql: "" }], [])).toThrow(
      /expected 1/,
    );
  });
});

describe("latestVersion()", () => {
  it("is the last version, or 0 for no migrations", () => {
    expect(latestVersion(LIST)).toBe(3);
    expect(latestVersion([])).toBe(0);
  });
});
