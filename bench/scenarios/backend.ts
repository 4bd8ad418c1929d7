/**
 * Where the suite's calls are decided: a real Charter server over gRPC (the suite's purpose), or
 * the pure core in process with a run view the runner keeps itself (to develop the data while the
 * server could not yet serve runs; `--core`). Both answer the same small interface.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { status } from "@grpc/grpc-js";
import { pino } from "pino";
import { startCharter, type RunningCharter } from "../../src/app/charter.js";
import { createCharterClients, type CharterClients } from "../../src/client/index.js";
import { DEFAULTS } from "../../src/config/config.js";
import {
  buildCatalog,
  buildPolicy,
  compose,
  decide,
  type ApprovalRecord,
  type Catalog,
  type TaskGrant,
  type Verdict as CoreVerdict,
} from "../../src/core/index.js";
import { decidedRunEffects } from "../../src/core/run-effects.js";
import { emptyRun, type RunView, type SeenLabel } from "../../src/core/run.js";
import { ApprovalOutcome } from "../../src/gen/charter/v1/approval_pb.js";
import { ResultOutcome } from "../../src/gen/charter/v1/authority_pb.js";
import { ApprovalStatus, Decision } from "../../src/gen/charter/v1/common_pb.js";
import { parseDocumentText } from "../../src/load/documents.js";
import type { Call } from "./model.js";

export const PROFILE = "owner-assistant";
export const OWNER = "ana@example.com";
/** Who approves: the owner, and for a 2-of-N requirement (manager) two more distinct people. */
const APPROVERS = ["ana@example.com", "manager-1@example.com", "manager-2@example.com"];

/** What the runner needs of a verdict. */
export interface Answer {
  readonly decision: "allow" | "deny" | "require_approval";
  readonly code: string;
  readonly rule: string;
  readonly decisionId: string;
  readonly approvalId: string;
  readonly requirement: string;
  readonly runLabels: readonly string[];
}

/** One task replay: one grant, one run. */
export interface RunSession {
  authorize(call: Call, callId: string, approvalId?: string): Promise<Answer>;
  /** Approves a held call as its requirement asks (as many distinct approvers as needed); returns the approval id. */
  approve(held: Answer): Promise<string>;
  /** Reports an allowed call's result with `labels` (ReportResult, outcome succeeded). */
  report(allowed: Answer, labels: readonly string[]): Promise<void>;
  /** Every approver of an approved call endorses it (EndorseApproval): `bounds`, `calls` calls, an hour. */
  endorse(approvalId: string, bounds: object, calls: number): Promise<void>;
}

export interface Backend {
  readonly kind: "server" | "core";
  session(name: string): Promise<RunSession>;
  close(): Promise<void>;
}

let runCounter = 0;
const freshRunId = (name: string) =>
  `run-${(++runCounter).toString().padStart(4, "0")}-${name}`.slice(0, 120);

// ---------------------------------------------------------------- the real server

const DECISIONS: Record<number, Answer["decision"]> = {
  [Decision.ALLOW]: "allow",
  [Decision.REQUIRE_APPROVAL]: "require_approval",
};

/** A real Charter on port 0 with a temp data dir, serving `catalog` and `policy`. */
export async function serverBackend(catalog: string, policy: string): Promise<Backend> {
  const dataDir = mkdtempSync(join(tmpdir(), "charter-scenarios-"));
  const server: RunningCharter = await startCharter(
    {
      ...DEFAULTS,
      listen: "127.0.0.1:0",
      dataDir,
      catalog,
      policy,
      logLevel: "silent",
      createStore: "if-missing",
      auth: "none",
    },
    { log: pino({ level: "silent" }) },
  );
  const clients: CharterClients = createCharterClients({ address: `127.0.0.1:${server.port}` });
  return {
    kind: "server",
    async session(name) {
      const { grantToken } = await clients.grants.issueGrant({
        profile: PROFILE,
        subject: "agent:scenarios",
        owner: OWNER,
        purpose: `bench:scenarios ${name}`,
      });
      const runId = freshRunId(name);
      return {
        async authorize(call, callId, approvalId) {
          const { verdict } = await clients.authority
            .authorize({
              grantToken,
              call: {
                callId,
                toolName: call.tool,
                argumentsJson: JSON.stringify(call.args),
                step: { runId, of: { case: "toolCallId", value: callId } },
              },
              ...(approvalId === undefined ? {} : { approvalId }),
            })
            .catch((err: unknown) => {
              throw new Error(
                `${name}: Authorize of ${call.tool} in run ${runId} failed (${(err as Error).message}); a server without the store's run support cannot serve calls with a run id`,
                { cause: err },
              );
            });
          if (!verdict) throw new Error(`${name}: Authorize answered no verdict`);
          return {
            decision: DECISIONS[verdict.decision] ?? "deny",
            code: verdict.reason?.code ?? "",
            rule: verdict.rule,
            decisionId: verdict.decisionId,
            approvalId: verdict.approvalId,
            requirement: verdict.requirement,
            runLabels: verdict.runLabels,
          };
        },
        async approve(held) {
          for (const decidedBy of APPROVERS) {
            // One who does not count for the requirement (the owner for "manager") is refused: the next answers.
            const answer = await clients.approvals
              .decideApproval({
                approvalId: held.approvalId,
                outcome: ApprovalOutcome.APPROVE,
                decidedBy,
                note: "bench:scenarios approves benign calls",
              })
              .catch((err: unknown) => {
                if ((err as { code?: number }).code === status.PERMISSION_DENIED) return undefined;
                throw err;
              });
            if (answer?.approval?.status === ApprovalStatus.APPROVED) return held.approvalId;
          }
          throw new Error(`${name}: approval ${held.approvalId} still not approved`);
        },
        async endorse(approvalId, bounds, calls) {
          const { approval } = await clients.approvals.getApproval({ approvalId });
          for (const endorsedBy of approval?.approvedBy ?? [])
            await clients.approvals.endorseApproval({
              approvalId,
              boundsJson: JSON.stringify(bounds),
              maxCalls: calls,
              ttlSeconds: 3600n,
              endorsedBy,
            });
        },
        async report(allowed, labels) {
          await clients.authority.reportResult({
            grantToken,
            runId,
            decisionId: allowed.decisionId,
            outcome: ResultOutcome.SUCCEEDED,
            labels: [...labels],
          });
        },
      };
    },
    async close() {
      clients.close();
      await server.stop(2_000);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

// ---------------------------------------------------------------- the pure core, in process

/**
 * The pure core with a run view kept here: an allowed call adds what `decidedRunEffects` says
 * (labels, its action's last time), a report adds its labels. No store, no approvals table: an
 * approval is a record made for the held call's digest.
 */
export function coreBackend(catalogFile: string, policyFile: string): Backend {
  const catalog: Catalog = buildCatalog(
    parseDocumentText(readFileSync(catalogFile, "utf8"), catalogFile),
    catalogFile,
  );
  const policy = buildPolicy(
    parseDocumentText(readFileSync(policyFile, "utf8"), policyFile),
    catalog,
    policyFile,
  );
  const now = Math.floor(Date.now() / 1000);
  let grants = 0;
  return {
    kind: "core",
    async session(name) {
      const composed = compose(
        { profile: PROFILE, subject: "agent:scenarios", owner: OWNER, purpose: name },
        policy,
        catalog,
        now,
        `grt_scenarios${++grants}`,
      );
      if (composed.kind !== "granted") throw new Error(`${name}: ${JSON.stringify(composed)}`);
      const grant: TaskGrant = composed.grant;
      const runId = freshRunId(name);
      let run: RunView = emptyRun(runId);
      const approvals = new Map<string, ApprovalRecord>();
      const allowed = new Map<string, CoreVerdict>();
      const addLabels = (labels: readonly string[], v: CoreVerdict) => {
        const have = new Set(run.labels.map((l) => l.label));
        const added: SeenLabel[] = labels
          .filter((l) => !have.has(l))
          .map((label) => ({ label, actionId: v.actionId, toolName: v.toolName, call: run.calls }));
        run = { ...run, labels: [...run.labels, ...added] };
      };
      return {
        async authorize(call, callId, approvalId) {
          const approval = approvalId === undefined ? undefined : approvals.get(approvalId);
          const v = decide(
            grant,
            catalog,
            { callId, toolName: call.tool, arguments: call.args },
            { now, run, ...(approval ? { approval } : {}) },
          );
          const decisionId = `dec_${runId}_${callId}_${approvalId ?? ""}`;
          if (v.decision === "allow") {
            const effects = decidedRunEffects(grant, catalog, v, call.args, runId);
            run = { ...run, calls: run.calls + 1, last: { ...run.last, [v.actionId]: now } };
            addLabels(effects.labels, v);
            allowed.set(decisionId, v);
            if (approval) approvals.set(approval.id, { ...approval, status: "consumed" });
          }
          let id = v.approvalId ?? "";
          if (v.decision === "require_approval" && id === "") {
            id = `apr_${runId}_${callId}`;
            approvals.set(id, {
              id,
              callDigest: v.callDigest,
              status: "pending",
              expiresAt: now + 600,
            });
          }
          return {
            decision:
              v.decision === "allow" || v.decision === "require_approval" ? v.decision : "deny",
            code: v.reason?.code ?? "",
            rule: v.rule ?? "",
            decisionId,
            approvalId: id,
            requirement: v.requirement ?? "",
            runLabels: v.runLabels ?? [],
          };
        },
        async approve(held) {
          const record = approvals.get(held.approvalId);
          if (!record) throw new Error(`${name}: no approval ${held.approvalId}`);
          approvals.set(record.id, { ...record, status: "approved" });
          return record.id;
        },
        async endorse() {
          throw new Error(`${name}: endorsements need the server backend`);
        },
        async report(answer, labels) {
          const v = allowed.get(answer.decisionId);
          if (!v) throw new Error(`${name}: report of a decision that was not allowed`);
          addLabels(labels, v);
        },
      };
    },
    async close() {},
  };
}
