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
