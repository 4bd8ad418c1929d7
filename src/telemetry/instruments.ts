/**
 * The seam between Charter's hot paths and its metrics: the authority, the store and the server
 * call these functions, which do nothing until `installInstruments` is given a recorder (the
 * Prometheus one, when `metricsListen` is set). Off, a call costs one indirect call; timers read
 * no clock.
 */
export interface Instruments {
  /** A verdict answered (after the commit): `allow`, `deny`, `require_approval`, `effect_suppressed`, and its reason code ("" for none). */
  decision(verdict: string, reason: string): void;
  /** A decision the shadow policy decided otherwise: the live verdict and the shadow's (the four decision kinds only). */
  shadowFlip(from: string, to: string): void;
  /** An RPC ended with a status (its name: OK, UNAVAILABLE…) after `seconds`. */
  rpc(method: string, status: string, seconds: number): void;
  /** A store operation (the port's method name) took `seconds`, failures included. */
  store(operation: string, seconds: number): void;
  /** One durable group commit of the audit log: `units` units of work in `seconds` (transaction and flush). */
  auditCommit(seconds: number, units: number): void;
}

const NONE: Instruments = {
  decision: () => undefined,
  shadowFlip: () => undefined,
  rpc: () => undefined,
  store: () => undefined,
  auditCommit: () => undefined,
};

// The process's one recorder (a server process has one Prometheus registry; a cluster worker is
// a process of its own): a switch read on the hot paths, so it stays module state rather than a
// context field threaded through the store and the pipeline. It holds no cached data.
let active: Instruments = NONE;
let timing = false;

/**
 * Installs the recorder every instrumented call reports to; `undefined` switches back to none.
 * Answers the function that switches back to none only if this recorder is still the one
 * installed (stopping one server's telemetry leaves another's recorder in place).
 */
export function installInstruments(instruments: Instruments | undefined): () => void {
  const installed = instruments ?? NONE;
  active = installed;
  timing = instruments !== undefined;
  return () => {
    if (active !== installed) return;
    active = NONE;
    timing = false;
  };
}

/** A start time for the `*Since` recorders: `performance.now()` when recording, else 0 (no clock read). */
export function startTimer(): number {
  return timing ? performance.now() : 0;
}

const seconds = (started: number) => (performance.now() - started) / 1000;

export function recordDecision(verdict: string, reason: string | undefined): void {
  active.decision(verdict, reason ?? "");
}

export function recordShadowFlip(from: string, to: string): void {
  active.shadowFlip(from, to);
}

export function recordRpcSince(method: string, status: string, started: number): void {
  if (started !== 0) active.rpc(method, status, seconds(started));
}

export function recordStoreSince(operation: string, started: number): void {
  if (started !== 0) active.store(operation, seconds(started));
}

export function recordAuditCommitSince(started: number, units: number): void {
  if (started !== 0) active.auditCommit(seconds(started), units);
}
