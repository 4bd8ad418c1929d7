import { mkdtempSync, rmSync, writeFileSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { status } from "@grpc/grpc-js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createAppContext, type AppContext } from "../../src/app/context.js";
import {
  authorize,
  decideApproval,
  getApproval,
  issueGrant,
  listApprovals,
  watchApprovals,
  type Actor,
} from "../../src/authority/index.js";
import { DEFAULTS } from "../../src/config/config.js";
import { toGrpcStatus } from "../../src/server/rpc-error.js";
import { FIXTURES } from "../support/charter-server.js";

// The approval functions of the application layer: who may act (an actor without `admin` only
// on their own approvals), who counts as the approver, and the re-check against the policy in force.
let dataDir: string;
let app: AppContext;
let policyFile: string;
beforeEach(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "charter-approvals-"));
  policyFile = join(dataDir, "policy.yaml");
  writeFileSync(policyFile, readFileSync(join(FIXTURES, "policy.yaml"), "utf8"));
  app = await createAppContext({
    ...DEFAULTS,
    dataDir,
    catalog: join(FIXTURES, "catalog.yaml"),
    policy: policyFile,
  });
});
afterEach(async () => {
  await app.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const ANA: Actor = { principal: "ana@example.com", roles: [] };
const MALLORY: Actor = { principal: "mallory@example.com", roles: [] };
const ADMIN: Actor = { principal: "ops@example.com", roles: ["admin"] };
const MANAGER: Actor = { principal: "lea@example.com", roles: ["approve:manager"] };

async function held(
  amount = 42,
  tool = "charge_payment",
  args?: object,
): Promise<{ approvalId: string; token: string }> {
  const { token } = await issueGrant(app, {
    profile: "owner-assistant",
    subject: "agent:a",
    owner: ANA.principal,
    purpose: "p",
    requestedActions: [],
  });
  const argumentsJson = JSON.stringify(
    args ?? { customer_id: "cus_ABC123", amount, currency: "EUR", description: "d" },
  );
  const { verdict } = await authorize(app, {
    grantToken: token,
    call: { callId: "c", toolName: tool, actionId: "", argumentsJson },
  });
  expect(verdict.decision).toBe("require_approval");
  return { approvalId: verdict.approvalId ?? "", token };
}

async function refusal(promise: Promise<unknown>) {
  return promise.then(
    () => expect.unreachable("expected a refusal"),
    (err: unknown) => err,
  );
}

describe("approval functions with an actor", () => {
  it("let the owner and an admin act, and refuse anyone else with PERMISSION_DENIED", async () => {
    const { approvalId } = await held();
    expect((await getApproval(app, approvalId, ANA)).id).toBe(approvalId);
    expect((await getApproval(app, approvalId, ADMIN)).id).toBe(approvalId);
    for (const attempt of [
      () => getApproval(app, approvalId, MALLORY),
      () => listApprovals(app, { owner: ANA.principal }, MALLORY),
      () =>
        decideApproval(
          app,
          { approvalId, outcome: "approve", decidedBy: ANA.principal, note: "" },
          MALLORY,
        ),
    ]) {
      const err = await refusal(attempt());
      expect(err).toMatchObject({ name: "AuthorityError", code: "PERMISSION_DENIED" });
      expect(toGrpcStatus(err).code).toBe(status.PERMISSION_DENIED);
    }
    const watching = watchApprovals(
      app,
      { owner: ANA.principal },
      { actor: MALLORY, signal: new AbortController().signal },
    );
    expect(await refusal(watching.next())).toMatchObject({ code: "PERMISSION_DENIED" });
    expect((await getApproval(app, approvalId)).status).toBe("pending");
  });

  it("list an actor's own approvals when no owner is named, and every owner's for an admin", async () => {
    await held();
    expect((await listApprovals(app, { owner: "" }, ANA)).approvals).toHaveLength(1);
    expect((await listApprovals(app, { owner: "" }, MALLORY)).approvals).toHaveLength(0);
    expect((await listApprovals(app, { owner: "" }, ADMIN)).approvals).toHaveLength(1);
    await expect(listApprovals(app, { owner: "" })).rejects.toMatchObject({
      code: "INVALID_REQUEST",
      field: "owner",
    });
  });

  it("count the actor, not the request's decided_by, as the approver", async () => {
    const { approvalId } = await held(150, "issue_refund", {
      order_id: "ord_A1B2C3",
      amount: 150,
      currency: "EUR",
      reason: "damaged",
    });
    await decideApproval(
      app,
      { approvalId, outcome: "approve", decidedBy: "manager:one", note: "" },
      MANAGER,
    );
    // The same actor claiming another name in decided_by is still the same approver.
    const again = await refusal(
      decideApproval(
        app,
        { approvalId, outcome: "approve", decidedBy: "manager:two", note: "" },
        MANAGER,
      ),
    );
    expect(again).toMatchObject({ code: "FAILED_PRECONDITION" });
    expect((await getApproval(app, approvalId)).approvedBy).toEqual([MANAGER.principal]);
  });

  it("count only the requirement's role holders: not an admin, not the owner, on every path", async () => {
    const { approvalId } = await held(160, "issue_refund", {
      order_id: "ord_A1B2C3",
      amount: 160,
      currency: "EUR",
      reason: "damaged",
    });
    const answer = (actor: Actor | undefined, decidedBy = "x") =>
      refusal(decideApproval(app, { approvalId, outcome: "approve", decidedBy, note: "" }, actor));
    for (const [actor, decidedBy] of [
      [ADMIN, "x"],
      [ANA, "x"],
      // Offline (the CLI on the data dir) and protected mode name the approver: not the owner.
      [undefined, ANA.principal],
      [{ principal: "local", roles: ["admin"], protectedMode: true } as const, ANA.principal],
    ] as const) {
      expect(await answer(actor, decidedBy)).toMatchObject({ code: "PERMISSION_DENIED" });
    }
    expect(await getApproval(app, approvalId)).toMatchObject({ status: "pending", approvedBy: [] });
    // The owner may still reject a call held for managers.
    const rejected = await decideApproval(
      app,
      { approvalId, outcome: "reject", decidedBy: "x", note: "" },
      ANA,
    );
    expect(rejected).toMatchObject({ status: "rejected", decidedBy: ANA.principal });
  });
});

describe("the re-check when approving", () => {
  it("ends the approval superseded when the policy in force now denies the action", async () => {
    const { approvalId, token } = await held();
    // A new content needs a new version (a reload refuses a changed policy under the same version).
    writeFileSync(
      policyFile,
      nextVersion(readFileSync(policyFile, "utf8")).replace(
        "deny: [shell.exec, files.delete]",
        "deny: [shell.exec, files.delete, payment.charge]",
      ),
    );
    await app.reload();
    const approval = await decideApproval(app, {
      approvalId,
      outcome: "approve",
      decidedBy: ANA.principal,
      note: "",
    });
    expect(approval).toMatchObject({
      status: "superseded",
      statusReason: { code: "EXPLICIT_DENY" },
    });
    const retry = await authorize(app, {
      grantToken: token,
      call: {
        callId: "c",
        toolName: "charge_payment",
        actionId: "",
        argumentsJson: JSON.stringify({
          customer_id: "cus_ABC123",
          amount: 42,
          currency: "EUR",
          description: "d",
        }),
        approvalId,
      },
    });
    expect(retry.verdict.decision).not.toBe("allow");
  });

  it("ends the approval superseded when the grant's source was suspended", async () => {
    const { approvalId } = await held();
    writeFileSync(
      policyFile,
      nextVersion(readFileSync(policyFile, "utf8")).replace(
        "description: The owner's trusted personal assistant.",
        "status: suspended\n    description: The owner's trusted personal assistant.",
      ),
    );
    await app.reload();
    expect(
      await decideApproval(app, {
        approvalId,
        outcome: "approve",
        decidedBy: ANA.principal,
        note: "",
      }),
    ).toMatchObject({
      status: "superseded",
      statusReason: { code: "NOT_GRANTED" },
    });
  });

  it("approves when nothing changed", async () => {
    const { approvalId } = await held();
    expect(
      (
        await decideApproval(app, {
          approvalId,
          outcome: "approve",
          decidedBy: ANA.principal,
          note: "",
        })
      ).status,
    ).toBe("approved");
  });
});

/** The policy text with its version changed, as an operator must when the content changes. */
function nextVersion(text: string): string {
  return text.replace(/^version: "?([^"\n]+)"?$/m, 'version: "$1-next"');
}
