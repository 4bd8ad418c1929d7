import type { Database } from "better-sqlite3";
import type { BudgetCharge, DecisionStore } from "../port.js";

/** Charges one call inside a unit of work; answers what is spent (naming the grant and the limit), or undefined. */
export type ChargeBudget = (charge: BudgetCharge) => string | undefined;

/**
 * Budget counters: one row per (grant, action), action "" counting every call. An increment is
 * conditional (`used < limit`), so it never passes the limit however many writers race; the
 * caller runs it in a savepoint and rolls back every counter when one is spent.
 */
export function sqliteBudgets(db: Database): { readonly charge: ChargeBudget; readonly usage: DecisionStore["getBudgetUsage"] } {
  const increment = db.prepare<[{ grant: string; action: string; max: number }], never>(`
    INSERT INTO budget_counters (grant_id, action_id, used) VALUES (@grant, @action, 1)
    ON CONFLICT (grant_id, action_id) DO UPDATE SET used = used + 1 WHERE used < @max`);
  const counters = db.prepare<[string], { action_id: string; used: number }>("SELECT action_id, used FROM budget_counters WHERE grant_id = ?");

  // A limit of 0 has no room at all (the upsert alone would insert its first call).
  const room = (grant: string, action: string, max: number) => max > 0 && increment.run({ grant, action, max }).changes === 1;
  const charge: ChargeBudget = (c) => {
    for (const g of c.grants) {
      if (g.maxCalls !== undefined && !room(g.grantId, "", g.maxCalls)) {
        return `grant ${g.grantId} has used all of its ${g.maxCalls} calls (maxCalls)`;
      }
      if (g.maxCallsPerAction !== undefined && !room(g.grantId, c.actionId, g.maxCallsPerAction)) {
        return `grant ${g.grantId} has used all of its ${g.maxCallsPerAction} calls of ${c.actionId} (maxCallsPerAction)`;
      }
    }
    return undefined;
  };

  return {
    charge,
    async usage(grantId) {
      let calls = 0;
      const perAction: Record<string, number> = {};
      for (const row of counters.all(grantId)) {
        if (row.action_id === "") calls = row.used;
        else perAction[row.action_id] = row.used;
      }
      return { calls, perAction };
    },
  };
}
