import { afterEach, describe, expect, it } from "vitest";
import {
  installInstruments,
  recordDecision,
  type Instruments,
} from "../../src/telemetry/instruments.js";

// The process's one recorder: stopping one server's telemetry must not switch off another's.

function counting(): { instruments: Instruments; decisions: () => number } {
  let decisions = 0;
  return {
    instruments: {
      decision: () => void (decisions += 1),
      shadowFlip: () => undefined,
      rpc: () => undefined,
      store: () => undefined,
      auditCommit: () => undefined,
    },
    decisions: () => decisions,
  };
}

afterEach(() => void installInstruments(undefined));

describe("installInstruments()", () => {
  it("answers an uninstall that switches its own recorder off", () => {
    const a = counting();
    const uninstall = installInstruments(a.instruments);
    recordDecision("allow", undefined);
    uninstall();
    recordDecision("allow", undefined);
    expect(a.decisions()).toBe(1);
  });

  it("leaves a recorder installed later in place when an earlier one is uninstalled", () => {
    const a = counting();
    const b = counting();
    const uninstallA = installInstruments(a.instruments);
    installInstruments(b.instruments);
    uninstallA();
    recordDecision("deny", "EXPLICIT_DENY");
    expect([a.decisions(), b.decisions()]).toEqual([0, 1]);
  });
});
