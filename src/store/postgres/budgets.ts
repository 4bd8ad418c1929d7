import type pg from "pg";
import type { BudgetCharge, DecisionStore } from "../port.js";

/**
 * One conditional increment: a counter row per (grant, action), action "" counting every call.
 * `WHERE used < $3` under the row lock of the upsert, so however many transactions race, the
 * counter never passes the limit; a counter without room changes no row.
 */
const INCREMENT = `
  INSERT INTO budget_counters (grant_id, action_id, used) VALUES ($1, $2, 1)
  ON CONFLICT (grant_id, action_id) DO UPDATE SET used = budget_counters.used + 1 WHERE budget_counters.used < $3`;

/** Charges one call inside a unit of work (the caller rolls every counter back on a refusal); answers what is spent, or undefined. */
export async function chargeBudget(
  tx: pg.PoolClient,
  c: BudgetCharge,
): Promise<string | undefined> {
  const room = async (grantId: string, actionId: string, max: number) =>
    max > 0 && (await tx.query(INCREMENT, [grantId, actionId, max])).rowCount === 1;
  for (const g of c.grants) {
    if (g.maxCalls !== undefined && !(await room(g.grantId, "", g.maxCalls)))
      return `grant ${g.grantId} has used all of its ${g.maxCalls} calls (maxCalls)`;
    if (
      g.maxCallsPerAction !== undefined &&
      !(await room(g.grantId, c.actionId, g.maxCallsPerAction))
    ) {
      return `grant ${g.grantId} has used all of its ${g.maxCallsPerAction} calls of ${c.actionId} (maxCallsPerAction)`;
    }
  }
  return undefined;
}

/** The calls counted against a grant, in total and per action. */
export async function budgetUsage(
  pool: pg.Pool,
  grantId: string,
): ReturnType<DecisionStore["getBudgetUsage"]> {
  const { rows } = await pool.query<{ action_id: string; used: number }>(
    "SELECT action_id, used FROM budget_counters WHERE grant_id = $1",
    [grantId],
  );
  let calls = 0;
  const perAction: Record<string, number> = {};
  for (const row of rows) {
    if (row.action_id === "") calls = row.used;
    else perAction[row.action_id] = row.used;
  }
  return { calls, perAction };
}
