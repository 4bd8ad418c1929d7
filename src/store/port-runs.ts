import type { SeenLabel, WindowCharge, WindowUsage } from "../core/run.js";

// The run part of the store port (DESIGN §7): the state a run keeps — the labels it has seen, its
// allowed calls, and the charges of the windows its rules count in — read before a call is
// decided and written in the same unit of work as the decision that changes it.

/** One run of one grant. `runId` "*" is the grant's row for sub-agents delegated without a run. */
export interface RunRow {
  readonly grantId: string;
  readonly runId: string;
}

/** Where a call reads its labels: one run, or (`runId` undefined) every run of a grant, the "*" row included. */
export interface LabelSource {
  readonly grantId: string;
  readonly runId?: string;
}

/** What to read of the runs to decide one call. */
export interface RunQuery {
  /** The rows whose labels the call sees: its own run and the runs its labels flow from along the delegation tree. */
  readonly labelsFrom: readonly LabelSource[];
  /** The call's own run: its allowed calls so far, and when each action of `after` was last allowed in it. */
  readonly run?: RunRow;
  readonly after: readonly string[];
  /** Windows by key: a window's usage is the charges made at or after `now - seconds` and not released. */
  readonly windows: readonly { readonly key: string; readonly seconds: number }[];
  /** Unix seconds. */
  readonly now: number;
}

/** The runs as read for one call. */
export interface RunSnapshot {
  /** Every label seen through `labelsFrom`, each once, with the call that first brought it in (earliest, then in `labelsFrom` order); sorted by label. */
  readonly labels: readonly SeenLabel[];
  /** Allowed calls in the call's own run so far (0 without one). */
  readonly calls: number;
  /** Action id -> Unix seconds of its last allowed call in the own run, for the actions of `after` that have one. */
  readonly last: Readonly<Record<string, number>>;
  /** Window key -> usage, for every window of the query (zero when nothing is counted). */
  readonly windows: Readonly<Record<string, WindowUsage>>;
}

/**
 * What an allowed (or dry-run) decision does to the runs, committed with its record or not at
 * all. Before writing anything, the unit of work reads `query` again: when it finds a label not
 * in `judged.labels`, or an action of `query.after` last allowed at another time than
 * `judged.last` says (or not at all where it says a time), or a bounded window without room for
 * its charge, the decision was made on a state that no longer holds — the commit answers
 * `run_changed` and writes nothing, and the shell decides the call again on a fresh read.
 */
export interface RunEffect {
  readonly query: RunQuery;
  readonly judged: {
    readonly labels: readonly string[];
    readonly last: Readonly<Record<string, number>>;
  };
  /** The call's own run: its call count goes up by one and its action is recorded as last allowed at the decision's time. */
  readonly run?: RunRow & { readonly actionId: string; readonly toolName: string };
  /** The labels the call's result brings in, written to every row of `writeTo` (a label a row has already keeps its first sighting). */
  readonly labels: readonly string[];
  readonly writeTo: readonly RunRow[];
  /** Charged under the decision's id; a charge with `maxCalls`/`maxSum` is refused (run_changed) when it would go past them. */
  readonly windows: readonly WindowCharge[];
  /** Unix seconds after which the run rows written may be pruned (the grant's expiry). */
  readonly expiresAt: number;
}

/** A result reported for an allowed call (`ReportResult`). */
export interface ResultReport {
  readonly decisionId: string;
  /** The decision must be an allow of this grant in this run. */
  readonly grantId: string;
  readonly runId: string;
  /** The call failed: its window charges are released (its labels stay). */
  readonly failed: boolean;
  /** Labels the result brings in besides the static ones, written to every row of `writeTo`. */
  readonly labels: readonly string[];
  /**
   * Static labels the result takes back: removed from the call's own run (`writeTo[0]`) where
   * this decision is the one that brought them, and only while no later decision of that run has
   * been recorded (one in the same second counts as later). Rows up the delegation tree keep them.
   */
  readonly narrow?: readonly string[];
  readonly writeTo: readonly RunRow[];
  /** Unix seconds. */
  readonly at: number;
  readonly expiresAt: number;
  /** The authenticated caller, for the audit record. */
  readonly caller?: string;
}

/** What a report changed: the labels newly added to the call's own run, and the window charges released. */
export interface ReportOutcome {
  readonly added: readonly string[];
  readonly released: number;
  /** The labels taken back from the own run (present when the report asked to narrow). */
  readonly narrowed?: readonly string[];
}

/** The run state of the store. */
export interface RunStore {
  readRun(query: RunQuery): Promise<RunSnapshot>;
  /**
   * Applies a reported result in one unit of work with its audit record (`result_reported`). A
   * decision that is not an allow of `grantId` in `runId` is NOT_FOUND. Reporting the same
   * decision again adds what is new and releases nothing twice.
   */
  reportResult(report: ResultReport): Promise<ReportOutcome>;
}
