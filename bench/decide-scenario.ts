/**
 * The policy `npm run bench:decide` puts to every engine, and the calls it times: agent:bench may
 * read mail and issue refunds of at most 100 in EUR or USD; shell.exec is denied.
 */

const refund = (amount: number) => ({
  order_id: "ord_A1B2C3",
  amount,
  currency: "EUR",
  reason: "damaged",
});

/** The calls, by what they exercise; requests are built once, so each engine is timed on its decision alone. */
export const CALLS_BY_KIND = {
  allow: {
    callId: "c1",
    toolName: "issue_refund",
    actionId: "refund.issue",
    arguments: refund(40),
  },
  constraint: {
    callId: "c2",
    toolName: "issue_refund",
    actionId: "refund.issue",
    arguments: refund(500),
  },
  forbidden: {
    callId: "c3",
    toolName: "run_shell",
    actionId: "shell.exec",
    arguments: { command: "ls" },
  },
} as const;

export type Kind = keyof typeof CALLS_BY_KIND;

/** Whether each call is allowed: every engine is checked against this before it is timed. */
export const EXPECTED: Readonly<Record<Kind, boolean>> = {
  allow: true,
  constraint: false,
  forbidden: false,
};

/** A contender: runs its operation `calls` times and answers nanoseconds per call. */
export type Contender = (calls: number) => number;

/** Throws unless `allows` answers what EXPECTED says for every call. */
export function checkEquivalent(engine: string, allows: (kind: Kind) => boolean): void {
  for (const kind of Object.keys(EXPECTED) as Kind[]) {
    const allowed = allows(kind);
    if (allowed !== EXPECTED[kind])
      throw new Error(
        `${engine} answers ${allowed ? "allow" : "deny"} for the ${kind} call; the policies are not equivalent`,
      );
  }
}
