import { isLoadError, type LoadError } from "../../src/core/index.js";

/** The LoadError `run` throws; fails the test when it throws anything else or nothing. */
export function loadErrorOf(run: () => unknown): LoadError {
  try {
    run();
  } catch (err) {
    if (isLoadError(err)) return err;
    throw err;
  }
  throw new Error("expected a LoadError, but nothing was thrown");
}
