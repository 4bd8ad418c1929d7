import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXIT_RPC_FAILED } from "../../src/cli/target.js";
import { startTestCharter, type TestCharter } from "../support/charter-server.js";
import { runCapture, type CliRun } from "../support/cli.js";

let charter: TestCharter;
let server: string;
beforeAll(async () => {
  charter = await startTestCharter();
  server = `127.0.0.1:${charter.server.port}`;
});
afterAll(async () => {
  await charter.stop();
});

const cli = (...args: string[]): Promise<CliRun> => runCapture(args);

describe("the CLI against a running server (--server)", () => {
  it("issues through IssueGrant, reads the catalog through GetCatalog and decides through Authorize", async () => {
    const issued = await cli(
      "issue",
      "--server",
      server,
      "--profile",
      "receptionist",
      "--subject",
      "agent:r",
      "--owner",
      "ana@example.com",
      "--json",
    );
    expect(issued.code).toBe(0);
    const { token, grant } = JSON.parse(issued.out) as {
      token: string;
      grant: { id: string; profile: string };
    };
    expect(grant.profile).toBe("receptionist");
    const stored = await charter.clients.grants.getGrant({ grantId: grant.id });
    expect(stored.grant?.id).toBe(grant.id);

    const catalog = await cli(
      "catalog",
      "--server",
      server,
      "--token",
      token,
      "--dialect",
      "gemini",
    );
    expect(catalog.code).toBe(0);
    const declarations =
      (JSON.parse(catalog.out) as { functionDeclarations: { name: string }[] }[])[0]
        ?.functionDeclarations ?? [];
    expect(declarations.map((d) => d.name)).toContain("check_availability");

    const denied = await cli(
      "check",
      "--server",
      server,
      "--token",
      token,
      "--tool",
      "issue_refund",
      "--args",
      "{}",
    );
    expect(denied.code).toBe(1);
    expect(JSON.parse(denied.out)).toMatchObject({
      decision: "DECISION_DENY",
      reason: { code: "NOT_GRANTED" },
    });
  });

  it("prints the gRPC status and exits 69 when the server refuses the request", async () => {
    const r = await cli("issue", "--server", server, "--profile", "no-such-profile");
    expect(r.code).toBe(EXIT_RPC_FAILED);
    expect(r.err).toContain('INVALID_ARGUMENT: profile: no profile named "no-such-profile"');
  });
});
