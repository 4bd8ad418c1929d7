import { DatabaseError } from "pg";
import { describe, expect, it } from "vitest";
import { StoreError } from "../../src/store/index.js";
import { toStoreError } from "../../src/store/postgres/errors.js";
import { isRetryable, retrying } from "../../src/store/postgres/retry.js";
import { parsePostgresUrl } from "../../src/store/postgres/url.js";

/** A server error as pg builds it from the wire. */
function serverError(code: string, message = `server error ${code}`): DatabaseError {
  const err = new DatabaseError(message, message.length, "error");
  err.code = code;
  return err;
}

function networkError(code: string): Error {
  return Object.assign(new Error(`connect ${code} 127.0.0.1:5432`), { code });
}

describe("toStoreError() for PostgreSQL", () => {
  it.each([
    ["unique violation 23505", serverError("23505"), "CONFLICT"],
    ["foreign key violation 23503", serverError("23503"), "CONFLICT"],
    ["data corrupted XX001", serverError("XX001"), "CORRUPT"],
    ["index corrupted XX002", serverError("XX002"), "CORRUPT"],
    ["admin shutdown 57P01", serverError("57P01"), "UNAVAILABLE"],
    ["statement timeout 57014", serverError("57014"), "UNAVAILABLE"],
    ["cannot connect now 57P03", serverError("57P03"), "UNAVAILABLE"],
    ["too many connections 53300", serverError("53300"), "UNAVAILABLE"],
    ["serialization failure left after retries 40001", serverError("40001"), "UNAVAILABLE"],
    ["an unknown server error", serverError("42P01"), "UNAVAILABLE"],
    ["connection refused", networkError("ECONNREFUSED"), "UNAVAILABLE"],
    ["connection reset", networkError("ECONNRESET"), "UNAVAILABLE"],
    ["a connect timeout", new Error("timeout exceeded when trying to connect"), "UNAVAILABLE"],
    ["a query timeout", new Error("Query read timeout"), "UNAVAILABLE"],
    [
      "a dual-stack connect failure",
      new AggregateError([networkError("ECONNREFUSED"), networkError("EADDRNOTAVAIL")], ""),
      "UNAVAILABLE",
    ],
    ["something else", "a string", "UNAVAILABLE"],
  ])("%s → %s", (_what, err, code) => {
    const translated = toStoreError(err, "read grant g");
    expect(translated).toBeInstanceOf(StoreError);
    expect(translated.code).toBe(code);
    expect(translated.message).toMatch(/^postgres store could not read grant g: ./);
    expect(translated.cause).toBe(err);
  });

  it("keeps a StoreError as it is", () => {
    const err = new StoreError("NOT_FOUND", "grant g is not known");
    expect(toStoreError(err, "x")).toBe(err);
  });

  it("scrubs the password from a message", () => {
    expect(toStoreError(new Error("bad s3cr3t-pw here"), "open", "s3cr3t-pw").message).toBe(
      "postgres store could not open: bad *** here",
    );
  });
});

describe("parsePostgresUrl()", () => {
  it("takes the schema out of the url, and names the database without its password", () => {
    const target = parsePostgresUrl(
      "postgres://charter:s3cr%40t@db.internal:6432/charter?schema=tenant_a&sslmode=disable",
    );
    expect(target).toEqual({
      connectionString: "postgres://charter:s3cr%40t@db.internal:6432/charter?sslmode=disable",
      schema: "tenant_a",
      redacted: "postgres://charter@db.internal:6432/charter (schema tenant_a)",
      password: "s3cr@t",
    });
    expect(parsePostgresUrl("postgresql://db/charter", "other").schema).toBe("other");
    expect(parsePostgresUrl("postgresql://db/charter").schema).toBe("public");
  });
});

describe("retrying()", () => {
  const fast = { attempts: 4, baseDelayMs: 1, maxDelayMs: 2 };

  it("runs again after serialization failures and deadlocks, then answers", async () => {
    const failures = [serverError("40001"), serverError("40P01"), serverError("40001")];
    let runs = 0;
    const result = await retrying(async () => {
      runs++;
      const failure = failures.shift();
      if (failure) throw failure;
      return "done";
    }, fast);
    expect(result).toBe("done");
    expect(runs).toBe(4);
  });

  it("gives up after `attempts` runs with the last failure", async () => {
    let runs = 0;
    const last = serverError("40001", "the last one");
    await expect(
      retrying(async () => {
        runs++;
        throw runs === fast.attempts ? last : serverError("40001");
      }, fast),
    ).rejects.toBe(last);
    expect(runs).toBe(fast.attempts);
  });

  it.each([
    ["a unique violation", serverError("23505")],
    ["a StoreError", new StoreError("CONFLICT", "other content")],
    ["a network error", networkError("ECONNREFUSED")],
  ])("never runs again after %s", async (_what, err) => {
    let runs = 0;
    await expect(
      retrying(async () => {
        runs++;
        throw err;
      }, fast),
    ).rejects.toBe(err);
    expect(runs).toBe(1);
    expect(isRetryable(err)).toBe(false);
  });
});
