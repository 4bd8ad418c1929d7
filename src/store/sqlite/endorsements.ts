import type { Database } from "better-sqlite3";
import type { Endorsement } from "../../core/endorsement.js";
import {
  ChargeRefused,
  ENDORSEMENT_COLUMNS,
  endorsementAudit,
  endorsementFromRow,
  endorsementRow,
  type EndorsementRow,
} from "../endorsement-row.js";
import { StoreError, type EndorsementStore } from "../port.js";
import type { ApproveEndorsed } from "./approvals.js";
import type { AuditAppend } from "./audit.js";
import type { GroupCommit } from "./group-commit.js";

const LIVE = "status = 'active' AND expires_at > @now AND used_calls < max_calls";

/**
 * The endorsements part of the SQLite store. Creating, revoking and using are units of the group
 * commit with their audit records; using one charges it and mints the call's approval together.
 */
export function sqliteEndorsements(
  db: Database,
  group: GroupCommit,
  append: AuditAppend,
  approvals: {
    readonly expireDue: (now: number) => number;
    readonly approveEndorsed: ApproveEndorsed;
  },
): EndorsementStore {
  const cols = ENDORSEMENT_COLUMNS.join(", ");
  const insert = db.prepare<[EndorsementRow], never>(
    `INSERT INTO endorsements (${cols}) VALUES (${ENDORSEMENT_COLUMNS.map((c) => `@${c}`).join(", ")})`,
  );
  const byId = db.prepare<[string], EndorsementRow>(
    `SELECT ${cols} FROM endorsements WHERE id = ?`,
  );
  const live = db.prepare<[{ g: string; a: string; r: string; now: number }], EndorsementRow>(
    `SELECT ${cols} FROM endorsements WHERE grant_id = @g AND action_id = @a AND requirement = @r AND ${LIVE} ORDER BY created_at, id`,
  );
  const charge = db.prepare<[{ id: string; now: number }], never>(
    `UPDATE endorsements SET used_calls = used_calls + 1 WHERE id = @id AND ${LIVE}`,
  );
  const prune = db.prepare<[number], never>("DELETE FROM endorsements WHERE expires_at < ?");
  const revoke = db.prepare<[{ id: string; at: number; by: string }], never>(
    "UPDATE endorsements SET status = 'revoked', revoked_at = @at, revoked_by = @by WHERE id = @id AND status = 'active'",
  );

  return {
    createEndorsement: (e, caller) =>
      group.run(() => {
        if (byId.get(e.id) !== undefined)
          throw new StoreError("CONFLICT", `endorsement ${e.id} exists already`);
        insert.run(endorsementRow(e));
        append(endorsementAudit(e, "endorsement.created", e.createdAt, e.endorsedBy, caller));
      }),
    async getEndorsement(id) {
      const row = byId.get(id);
      return row === undefined ? undefined : endorsementFromRow(row);
    },
    async listEndorsements(q) {
      const where: string[] = [];
      const params: Record<string, string | number> = { limit: q.limit };
      if (q.owner !== undefined) {
        where.push("owner = @owner");
        params["owner"] = q.owner;
      }
      if (q.liveAt !== undefined) {
        where.push(LIVE);
        params["now"] = q.liveAt;
      }
      if (q.after) {
        where.push("(created_at < @ac OR (created_at = @ac AND id < @ai))");
        params["ac"] = q.after.createdAt;
        params["ai"] = q.after.id;
      }
      const sql = `SELECT ${cols} FROM endorsements ${where.length > 0 ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY created_at DESC, id DESC LIMIT @limit`;
      return db
        .prepare<[Record<string, string | number>], EndorsementRow>(sql)
        .all(params)
        .map(endorsementFromRow);
    },
    async liveEndorsements(grantId, actionId, requirement, now) {
      return live.all({ g: grantId, a: actionId, r: requirement, now }).map(endorsementFromRow);
    },
    revokeEndorsement: (id, by, at, caller) =>
      group.run(() => {
        const row = byId.get(id);
        if (row === undefined) throw new StoreError("NOT_FOUND", `endorsement ${id} is not known`);
        if (revoke.run({ id, at, by }).changes === 0)
          return { endorsement: endorsementFromRow(row), revoked: false };
        const after: Endorsement = {
          ...endorsementFromRow(row),
          status: "revoked",
          revokedAt: at,
          revokedBy: by,
        };
        append(endorsementAudit(after, "endorsement.revoked", at, by, caller));
        return { endorsement: after, revoked: true };
      }),
    pruneEndorsements: (before) => group.run(() => prune.run(before).changes),
    approveByEndorsements: async (call) => {
      try {
        return await group.run(() => {
          approvals.expireDue(call.now);
          const endorsers = call.endorsements.map((e) => e.endorsedBy);
          const minted = approvals.approveEndorsed(call.draft, endorsers, call.decidedBy, call.now);
          if (!minted.charged) return minted.approval;
          for (const e of call.endorsements)
            if (charge.run({ id: e.id, now: call.now }).changes === 0)
              throw new ChargeRefused(e.id);
          return minted.approval;
        });
      } catch (err) {
        if (err instanceof ChargeRefused) return undefined;
        throw err;
      }
    },
  };
}
