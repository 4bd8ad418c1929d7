import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { StoreError } from "../../src/store/port.js";
import { toStoreError } from "../../src/store/sqlite/errors.js";

/** What `fn` threw when run against a fresh in-memory database. */
function thrownBy(fn: (db: Database.Database) => void): unknown {
  const db = new Database(":memory:");
  try {
    fn(db);
  } catch (err) {
    return err;
  } finally {
    if (db.open) db.close();
  }
  return expect.unreachable("expected the statement to throw");
}

describe("toStoreError()", () => {
  it("maps constraint violations of every kind to CONFLICT, keeping the cause", () => {
    const unique = thrownBy((db) =>
      db.exec("CREATE TABLE t (id TEXT PRIMARY KEY); INSERT INTO t VALUES ('a'), ('a')"),
    );
    const notNull = thrownBy((db) =>
      db.exec("CREATE TABLE t (id TEXT NOT NULL); INSERT INTO t VALUES (NULL)"),
    );
    for (const cause of [unique, notNull]) {
      const err = toStoreError(cause, "store grant g");
      expect(err).toBeInstanceOf(StoreError);
      expect(err).toMatchObject({
        code: "CONFLICT",
        cause,
        message: expect.stringContaining("could not store grant g") as unknown,
      });
    }
  });

  it("maps a closed database (a TypeError from better-sqlite3) to UNAVAILABLE", () => {
    const closed = thrownBy((db) => {
      db.close();
      db.prepare("SELECT 1");
    });
    expect(closed).toBeInstanceOf(TypeError);
    expect(toStoreError(closed, "read grant g").code).toBe("UNAVAILABLE");
  });

  it("maps busy and I/O result codes to UNAVAILABLE and damage to CORRUPT", () => {
    const coded = (code: string): Error => Object.assign(new Error(code), { code });
    expect(toStoreError(coded("SQLITE_BUSY"), "x").code).toBe("UNAVAILABLE");
    expect(toStoreError(coded("SQLITE_BUSY_SNAPSHOT"), "x").code).toBe("UNAVAILABLE");
    expect(toStoreError(coded("SQLITE_IOERR_WRITE"), "x").code).toBe("UNAVAILABLE");
    expect(toStoreError(coded("SQLITE_CORRUPT"), "x").code).toBe("CORRUPT");
    expect(toStoreError(coded("SQLITE_NOTADB"), "x").code).toBe("CORRUPT");
  });

  it("fails closed: an unrecognised error becomes UNAVAILABLE, a StoreError passes unchanged", () => {
    expect(toStoreError(new RangeError("boom"), "x").code).toBe("UNAVAILABLE");
    expect(toStoreError("not even an error", "x")).toMatchObject({
      code: "UNAVAILABLE",
      message: expect.stringContaining("not even an error") as unknown,
    });
    const original = new StoreError("NOT_FOUND", "grant g is not known");
    expect(toStoreError(original, "x")).toBe(original);
  });
});
