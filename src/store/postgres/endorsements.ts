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
import { approveEndorsed, expireDue } from "./approvals.js";
import { inChainUnit, type Chain } from "./chain.js";

const COLS = ENDORSEMENT_COLUMNS.join(", ");
const LIVE = (now: string) =>
  `status = 'active' AND expires_at > ${now} AND used_calls < max_calls`;
const INSERT = `INSERT INTO endorsements (${COLS}) VALUES (${ENDORSEMENT_COLUMNS.map((_, i) => `$${i + 1}`).join(", ")})`;

/**
 * The endorsements part of the PostgreSQL store, the same behaviour as SQLite's: every write is a
 * unit of work under the chain lock with its audit records; a use's charges are conditional
 * updates, and one that finds the endorsement spent rolls the whole unit back.
 */
export function postgresEndorsementStore(chain: Chain): EndorsementStore {
  const { pool } = chain;
  const byId = async (q: Pick<typeof pool, "query">, id: string) =>
    (await q.query<EndorsementRow>(`SELECT ${COLS} FROM endorsements WHERE id = $1`, [id])).rows[0];
  return {
    createEndorsement: (e, caller) =>
      inChainUnit(chain, async (unit) => {
        if ((await byId(unit.tx, e.id)) !== undefined)
          throw new StoreError("CONFLICT", `endorsement ${e.id} exists already`);
        const row = endorsementRow(e);
        await unit.tx.query(
          INSERT,
          ENDORSEMENT_COLUMNS.map((c) => row[c]),
        );
        await unit.append(
          endorsementAudit(e, "endorsement.created", e.createdAt, e.endorsedBy, caller),
        );
      }),

    async getEndorsement(id) {
      const row = await byId(pool, id);
      return row === undefined ? undefined : endorsementFromRow(row);
    },

    async listEndorsements(q) {
      const where: string[] = [];
      const params: unknown[] = [];
      const param = (v: unknown) => `$${params.push(v)}`;
      if (q.owner !== undefined) where.push(`owner = ${param(q.owner)}`);
      if (q.liveAt !== undefined) where.push(LIVE(param(q.liveAt)));
      if (q.after) {
        const created = param(q.after.createdAt);
        where.push(
          `(created_at < ${created} OR (created_at = ${created} AND id COLLATE "C" < ${param(q.after.id)}))`,
        );
      }
      const sql = `SELECT ${COLS} FROM endorsements ${where.length > 0 ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY created_at DESC, id COLLATE "C" DESC LIMIT ${param(q.limit)}`;
      return (await pool.query<EndorsementRow>(sql, params)).rows.map(endorsementFromRow);
    },

    async liveEndorsements(grantId, actionId, requirement, now) {
      const { rows } = await pool.query<EndorsementRow>(
        `SELECT ${COLS} FROM endorsements WHERE grant_id = $1 AND action_id = $2 AND requirement = $3 AND ${LIVE("$4")} ORDER BY created_at, id COLLATE "C"`,
        [grantId, actionId, requirement, now],
      );
      return rows.map(endorsementFromRow);
    },

    revokeEndorsement: (id, by, at, caller) =>
      inChainUnit(chain, async (unit) => {
        const row = await byId(unit.tx, id);
        if (row === undefined) throw new StoreError("NOT_FOUND", `endorsement ${id} is not known`);
        const done = await unit.tx.query(
          "UPDATE endorsements SET status = 'revoked', revoked_at = $2, revoked_by = $3 WHERE id = $1 AND status = 'active'",
          [id, at, by],
        );
        if (done.rowCount === 0) return { endorsement: endorsementFromRow(row), revoked: false };
        const after: Endorsement = {
          ...endorsementFromRow(row),
          status: "revoked",
          revokedAt: at,
          revokedBy: by,
        };
        await unit.append(endorsementAudit(after, "endorsement.revoked", at, by, caller));
        return { endorsement: after, revoked: true };
      }),

    async pruneEndorsements(before) {
      return (
        (await pool.query("DELETE FROM endorsements WHERE expires_at < $1", [before])).rowCount ?? 0
      );
    },

    approveByEndorsements: async (call) => {
      try {
        return await inChainUnit(chain, async (unit) => {
          await expireDue(unit, call.now);
          const endorsers = call.endorsements.map((e) => e.endorsedBy);
          const minted = await approveEndorsed(
            unit,
            call.draft,
            endorsers,
            call.decidedBy,
            call.now,
          );
          if (!minted.charged) return minted.approval;
          for (const e of call.endorsements) {
            const charged = await unit.tx.query(
              `UPDATE endorsements SET used_calls = used_calls + 1 WHERE id = $1 AND ${LIVE("$2")}`,
              [e.id, call.now],
            );
            if (charged.rowCount === 0) throw new ChargeRefused(e.id);
          }
          return minted.approval;
        });
      } catch (err) {
        if (err instanceof ChargeRefused) return undefined;
        throw err;
      }
    },
  };
}
