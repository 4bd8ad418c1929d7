import type { Database } from "better-sqlite3";
import { StoreError, type BudgetCharge, type DecisionStore } from "../port.js";
import type { GroupShared, GroupUnit } from "./group-commit.js";

/** Charges one call inside a unit of work; answers what is spent (naming the grant and the limit), or undefined. */
export type ChargeBudget = (charge: BudgetCharge, unit: GroupUnit) => string | undefined;

/** One counter as the group sees it: `used` as read under the write lock, plus what the group's kept units charged. */
interface Counter {
  readonly grant: string;
  readonly action: string;
  /** As read at the group's first charge of it (0 when there is no row). */
  readonly read: number;
  used: number;
}

/**
 * Budget counters: one row per (grant, action), action "" counting every call. A group reads each
 * counter it charges once (it holds the write lock, so no other writer changes it meanwhile),
 * charges it in memory in queue order, and writes each changed counter once, before it commits.
 * A charge is what the conditional upsert `used = used + 1 WHERE used < limit` did per call: a
 * counter without room changes nothing, and a call with a spent counter charges none of its
 * counters; a unit rolled back takes its charges with it. The group drops the counters when it
 * ends, so the next group reads them again.
 */
export function sqliteBudgets(db: Database): {
  readonly charge: ChargeBudget;
  readonly usage: DecisionStore["getBudgetUsage"];
} {
  const read = db.prepare<[string, string], { used: unknown }>(
    "SELECT used FROM budget_counters WHERE grant_id = ? AND action_id = ?",
  );
  const write = db.prepare<[string, string, number], never>(`
    INSERT INTO budget_counters (grant_id, action_id, used) VALUES (?, ?, ?)
    ON CONFLICT (grant_id, action_id) DO UPDATE SET used = excluded.used`);
  const counters = db.prepare<[string], { action_id: string; used: number }>(
    "SELECT action_id, used FROM budget_counters WHERE grant_id = ?",
  );

  /** The counters of one group, by grant and action. */
  const groupCounters = () => {
    const byGrant = new Map<string, Map<string, Counter>>();
    const state: GroupShared & { counter(grant: string, action: string): Counter } = {
      counter(grant, action) {
        let actions = byGrant.get(grant);
        if (actions === undefined) byGrant.set(grant, (actions = new Map<string, Counter>()));
        let c = actions.get(action);
        if (c === undefined) {
          const used = read.get(grant, action)?.used ?? 0;
          if (typeof used !== "number")
            throw new StoreError("CORRUPT", `budget counter (${grant}, ${action}) is not a number`);
          actions.set(action, (c = { grant, action, read: used, used }));
        }
        return c;
      },
      beforeCommit() {
        for (const actions of byGrant.values())
          for (const c of actions.values())
            if (c.used !== c.read) write.run(c.grant, c.action, c.used);
      },
    };
    return state;
  };

  const charge: ChargeBudget = (call, unit) => {
    const group = unit.shared(groupCounters);
    const charged: Counter[] = [];
    // A limit of 0 has no room at all (the upsert alone would have inserted its first call).
    const room = (grant: string, action: string, max: number) => {
      if (!(max > 0)) return false;
      const c = group.counter(grant, action);
      if (!(c.used < max)) return false;
      c.used += 1;
      charged.push(c);
      return true;
    };
    const spent = spentLimit(call, room);
    if (spent !== undefined) for (const c of charged) c.used -= 1;
    else if (charged.length > 0) unit.onRollback(() => charged.forEach((c) => (c.used -= 1)));
    return spent;
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

/** Charges every counter of a call in order with `room`, stopping at the first without room; answers what is spent, or undefined. */
function spentLimit(
  c: BudgetCharge,
  room: (grant: string, action: string, max: number) => boolean,
): string | undefined {
  for (const g of c.grants) {
    if (g.maxCalls !== undefined && !room(g.grantId, "", g.maxCalls)) {
      return `grant ${g.grantId} has used all of its ${g.maxCalls} calls (maxCalls)`;
    }
    if (g.maxCallsPerAction !== undefined && !room(g.grantId, c.actionId, g.maxCallsPerAction)) {
      return `grant ${g.grantId} has used all of its ${g.maxCallsPerAction} calls of ${c.actionId} (maxCallsPerAction)`;
    }
  }
  return undefined;
}
