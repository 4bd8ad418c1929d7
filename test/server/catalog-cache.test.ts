import { readFileSync, writeFileSync } from "node:fs";
import { status, type ServiceError } from "@grpc/grpc-js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { errorDetails } from "../../src/client/index.js";
import { Dialect } from "../../src/gen/charter/v1/common_pb.js";
import {
  startWithEditablePolicy,
  type EditablePolicyCharter,
  type TestCharter,
} from "../support/charter-server.js";

// GetCatalog serves the rendering from a cache, but the token, its revocation and the kill switch
// are checked on every call: a catalog the cache holds is refused (or narrowed) at once.

let served: EditablePolicyCharter;
let policy: string;
let charter: TestCharter;
beforeEach(async () => {
  served = await startWithEditablePolicy("charter-catalog-cache-");
  ({ policy, charter } = served);
});
afterEach(() => served.stop());

async function edit(change: (text: string) => string): Promise<void> {
  writeFileSync(
    policy,
    change(readFileSync(policy, "utf8")).replace(
      'version: "demo-policy-1"',
      'version: "demo-policy-2"',
    ),
  );
  await charter.server.reload();
}

async function issue(): Promise<{ token: string; grantId: string }> {
  const { grantToken, grant } = await charter.clients.grants.issueGrant({
    profile: "owner-assistant",
    subject: "agent:a",
    owner: "ana@example.com",
    purpose: "p",
  });
  return { token: grantToken, grantId: grant?.id ?? "" };
}

const names = async (token: string) =>
  (
    (await charter.clients.catalog.getCatalog({ grantToken: token, dialect: Dialect.MCP })).view
      ?.tools ?? []
  ).map((t) => t.name);
const refusal = async (token: string) => {
  const err = await charter.clients.catalog
    .getCatalog({ grantToken: token, dialect: Dialect.MCP })
    .catch((e: unknown) => e as ServiceError);
  return { code: (err as ServiceError).code, reason: errorDetails(err as ServiceError).reason };
};

describe("GetCatalog from its cache", () => {
  it("answers the same catalog twice", async () => {
    const { token } = await issue();
    const first = await charter.clients.catalog.getCatalog({
      grantToken: token,
      dialect: Dialect.OPENAI_CHAT,
    });
    const second = await charter.clients.catalog.getCatalog({
      grantToken: token,
      dialect: Dialect.OPENAI_CHAT,
    });
    expect(second).toEqual(first);
    expect(first.view?.tools.length).toBeGreaterThan(0);
  });

  it("refuses a cached catalog right after its grant is revoked", async () => {
    const { token, grantId } = await issue();
    await names(token);
    await names(token);
    await charter.clients.grants.revokeGrant({ grantId, reason: "test" });
    expect(await refusal(token)).toEqual({ code: status.UNAUTHENTICATED, reason: "GRANT_REVOKED" });
  });

  it("refuses a cached catalog right after the reload that suspends its source", async () => {
    const { token } = await issue();
    await names(token);
    await edit((t) =>
      t.replace(
        "  owner-assistant:\n    kind: grant\n",
        "  owner-assistant:\n    kind: grant\n    status: suspended\n",
      ),
    );
    expect(await refusal(token)).toEqual({
      code: status.UNAUTHENTICATED,
      reason: "POLICY_WITHDRAWN",
    });
  });

  it("drops a tool from a cached catalog right after the reload that denies it globally", async () => {
    const { token } = await issue();
    expect(await names(token)).toContain("web_search");
    await edit((t) =>
      t.replace("deny: [shell.exec, files.delete]", "deny: [shell.exec, files.delete, web.search]"),
    );
    const after = await names(token);
    expect(after).not.toContain("web_search");
    expect(after).toContain("read_email");
  });
});
