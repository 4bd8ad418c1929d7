import { expect } from "vitest";
import { StoreError, type StoreErrorCode } from "../../src/store/port.js";

/** What a promise rejected with; fails the test when it resolves. */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => expect.unreachable(`expected a rejection, got ${JSON.stringify(value)}`),
    (err: unknown) => err,
  );
}

/** Asserts that `promise` rejects with a StoreError of `code`; answers the error. */
export async function expectStoreError(
  promise: Promise<unknown>,
  code: StoreErrorCode,
): Promise<StoreError> {
  const err = await rejection(promise);
  expect(err).toBeInstanceOf(StoreError);
  expect(err).toMatchObject({ name: "StoreError", code });
  return err as StoreError;
}
