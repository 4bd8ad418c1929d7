import { readFileSync, writeFileSync } from "node:fs";
import { status, type ServiceError } from "@grpc/grpc-js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { errorDetails } from "../../src/client/index.js";
import { Decision } from "../../src/gen/charter/v1/common_pb.js";
import {
  startWithEditablePolicy,
  type EditablePolicyCharter,
  type TestCharter,
} from "../support/charter-server.js";

// The kill switch: a reload that suspends a source, or adds a global deny, stops outstanding
// grants at once — their tokens are still valid (and cached), the policy in force says no.

let served: EditablePolicyCharter;
let policy: string;
let charter: TestCharter;
beforeEach(async () => {
  served = await startWithEditablePolicy("charter-kill-");
  ({ policy, charter } = served);
});
afterEach(() => served.stop());

/** Rewrites the policy file (with a new version unless `keepVersion`) and reloads. */
async function edit(
  change: (text: string) => string,
  options: { keepVersion?: boolean } = {},
): Promise<void> {
  let text = change(readFileSync(policy, "utf8"));
  if (!options.keepVersion)
    text = text.replace('version: "demo-policy-1"', 'version: "demo-policy-2"');
  writeFileSync(policy, text);
  await charter.server.reload();
}

const suspendOwnerAssistant = (t: string) =>
  t.replace(
    "  owner-assistant:\n    kind: grant\n",
    "  owner-assistant:\n    kind: grant\n    status: suspended\n",
  );
const denyGlobally = (action: string) => (t: string) =>
  t.replace("deny: [shell.exec, files.delete]", `deny: [shell.exec, files.delete, ${action}]`);

async function issue(): Promise<string> {
  return (
    await charter.clients.grants.issueGrant({
      profile: "owner-assistant",
      subject: "agent:a",
      owner: "ana@example.com",
      purpose: "p",
    })
  ).grantToken;
}

async function verdict(token: string, tool: string, args: object) {
  const { verdict: v } = await charter.clients.authority.authorize({
    grantToken: token,
    call: { callId: "c", toolName: tool, argumentsJson: JSON.stringify(args) },
  });
  return { decision: v?.decision, code: v?.reason?.code ?? "", receipt: v?.receipt ?? "" };
}

const SEARCH = ["web_search", { query: "charter" }] as const;
const READ = ["read_email", { message_id: "msg_7f3a9c21" }] as const;

describe("the kill switch", () => {
  it("denies an outstanding grant right after the reload that suspends its source, and its catalog is refused", async () => {
    const token = await issue();
    expect(await verdict(token, ...SEARCH)).toMatchObject({ decision: Decision.ALLOW });
    expect(await verdict(token, ...SEARCH)).toMatchObject({ decision: Decision.ALLOW }); // now from the verifier cache
    await edit(suspendOwnerAssistant);
    expect(await verdict(token, ...SEARCH)).toEqual({
      decision: Decision.DENY,
      code: "POLICY_WITHDRAWN",
      receipt: "",
    });
    expect(await verdict(token, ...READ)).toMatchObject({
      decision: Decision.DENY,
      code: "POLICY_WITHDRAWN",
    });
    const err = await charter.clients.catalog
      .getCatalog({ grantToken: token })
      .catch((e: unknown) => e as ServiceError);
    expect(err).toMatchObject({ code: status.UNAUTHENTICATED });
    expect(errorDetails(err as ServiceError).reason).toBe("POLICY_WITHDRAWN");
    const child = await charter.clients.grants
      .delegateGrant({ parentToken: token, subject: "s", allowed: ["web.search"] })
      .catch((e: unknown) => e as ServiceError);
    expect(child).toMatchObject({ code: status.UNAUTHENTICATED });
  });

  it("denies the action right after the reload that adds it to a global deny source, and leaves the rest of the grant", async () => {
    const token = await issue();
    expect(await verdict(token, ...SEARCH)).toMatchObject({ decision: Decision.ALLOW });
    await edit(denyGlobally("web.search"));
    expect(await verdict(token, ...SEARCH)).toEqual({
      decision: Decision.DENY,
      code: "POLICY_WITHDRAWN",
      receipt: "",
    });
    expect(await verdict(token, ...READ)).toMatchObject({ decision: Decision.ALLOW });
    const { view } = await charter.clients.catalog.getCatalog({ grantToken: token });
    const names = (view?.tools ?? []).map((t) => t.name);
    expect(names).toContain("read_email");
    expect(names).not.toContain("web_search");
  });

  it("never widens: lifting a deny does not give an outstanding grant the action", async () => {
    const token = await issue();
    expect(await verdict(token, "run_shell", { command: "ls" })).toMatchObject({
      code: "EXPLICIT_DENY",
    });
    await edit((t) => t.replace("deny: [shell.exec, files.delete]", "deny: [files.delete]"));
    expect(await verdict(token, "run_shell", { command: "ls" })).toMatchObject({
      decision: Decision.DENY,
      code: "EXPLICIT_DENY",
    });
  });

  it("refuses a reload whose content changed but whose version did not, and keeps the policy in force", async () => {
    const token = await issue();
    await expect(edit(denyGlobally("web.search"), { keepVersion: true })).rejects.toThrow(
      /the policy changed but its version is still "demo-policy-1"/,
    );
    expect(await verdict(token, ...SEARCH)).toMatchObject({ decision: Decision.ALLOW });
  });
});

describe("the kill switch is sticky (issue 22 finding 12)", () => {
  /** Writes the policy with `change` applied to the original text, under `version`, and reloads. */
  async function setPolicy(version: string, change: (t: string) => string = (t) => t) {
    writeFileSync(
      policy,
      change(original).replace('version: "demo-policy-1"', `version: "${version}"`),
    );
    await charter.server.reload();
    await charter.server.context.withdrawalsSwept();
  }
  let original: string;
  beforeEach(() => {
    original = readFileSync(policy, "utf8");
  });

  async function issueAs(profile: string, subject: string) {
    const { grantToken, grant } = await charter.clients.grants.issueGrant({
      profile,
      subject,
      owner: "ana@example.com",
      purpose: "p",
    });
    return { token: grantToken, id: grant?.id ?? "" };
  }
  async function refusal(token: string) {
    const { verdict: v } = await charter.clients.authority.authorize({
      grantToken: token,
      call: { callId: "c", toolName: "web_search", argumentsJson: '{"query":"charter"}' },
    });
    return {
      decision: v?.decision,
      code: v?.reason?.code ?? "",
      message: v?.reason?.message ?? "",
    };
  }
  const WHY = 'source "owner-assistant" is suspended';

  it("keeps a grant stopped by a suspension stopped after the reload that lifts it, with the reason recorded like a revocation", async () => {
    const called = await issueAs("owner-assistant", "agent:called");
    expect(await verdict(called.token, ...SEARCH)).toMatchObject({ decision: Decision.ALLOW });
    await setPolicy("demo-policy-2", suspendOwnerAssistant);
    expect(await refusal(called.token)).toMatchObject({ code: "POLICY_WITHDRAWN" });
    await setPolicy("demo-policy-3");
    const after = await refusal(called.token);
    expect(after).toMatchObject({ decision: Decision.DENY, code: "POLICY_WITHDRAWN" });
    expect(after.message).toContain(WHY);
    expect(await charter.server.context.store.getGrant(called.id)).toMatchObject({
      revokedReason: `withdrawn: ${WHY}`,
    });
    const audit = (await charter.server.context.store.readAudit(0, 10_000)).map(
      (r) => JSON.parse(r.entry) as { kind: string; grantId?: string; caller?: string },
    );
    expect(audit.filter((e) => e.kind === "grant.revoked" && e.grantId === called.id)).toEqual([
      expect.objectContaining({ caller: "policy:demo-policy-2" }),
    ]);
    const err = await charter.clients.catalog
      .getCatalog({ grantToken: called.token })
      .catch((e: unknown) => e as ServiceError);
    expect(errorDetails(err as ServiceError).reason).toBe("POLICY_WITHDRAWN");
  });

  it("records at reload a grant not called while the withdrawal was in force, and leaves unrelated grants allowed", async () => {
    const idle = await issueAs("owner-assistant", "agent:idle");
    const other = await issueAs("email-drafter", "agent:other");
    await setPolicy("demo-policy-2", suspendOwnerAssistant);
    expect(await charter.server.context.store.getGrant(idle.id)).toMatchObject({
      revokedReason: `withdrawn: ${WHY}`,
    });
    await setPolicy("demo-policy-3");
    const after = await refusal(idle.token);
    expect(after).toMatchObject({ decision: Decision.DENY, code: "POLICY_WITHDRAWN" });
    expect(after.message).toContain(WHY);
    expect(await verdict(other.token, ...READ)).toMatchObject({ decision: Decision.ALLOW });
    expect((await charter.server.context.store.getGrant(other.id))?.revokedAt).toBeUndefined();
    // A grant issued after the lift is not touched.
    const fresh = await issueAs("owner-assistant", "agent:fresh");
    expect(await verdict(fresh.token, ...SEARCH)).toMatchObject({ decision: Decision.ALLOW });
  });

  it("leaves an action withdrawn by a deny list withdrawn only while the deny is in force", async () => {
    const token = await issue();
    await setPolicy("demo-policy-2", denyGlobally("web.search"));
    expect(await verdict(token, ...SEARCH)).toMatchObject({ code: "POLICY_WITHDRAWN" });
    expect(await verdict(token, ...READ)).toMatchObject({ decision: Decision.ALLOW });
  });
});
