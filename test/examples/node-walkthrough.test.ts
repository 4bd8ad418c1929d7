import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { walkthrough } from "../../examples/node/walkthrough.js";
import { startTestCharter, type TestCharter } from "../support/charter-server.js";

let charter: TestCharter;
beforeAll(async () => {
  charter = await startTestCharter();
});
afterAll(async () => {
  await charter.stop();
});

describe("examples/node walkthrough", () => {
  it("runs against a real server: allow, deny, approval, and a receipt verified offline", async () => {
    const lines: string[] = [];
    const result = await walkthrough(
      `127.0.0.1:${charter.server.port}`,
      { issuer: charter.config.issuer, audience: charter.config.audience },
      (l) => lines.push(l),
    );
    expect(result.tools).toContain("issue_refund");
    expect(result.tools).not.toContain("run_shell");
    expect(result.verdicts).toEqual([
      { call: "call-1 issue_refund", decision: "ALLOW", reason: "", requirement: "" },
      { call: "call-2 run_shell", decision: "DENY", reason: "EXPLICIT_DENY", requirement: "" },
      {
        call: "call-3 issue_refund",
        decision: "REQUIRE_APPROVAL",
        reason: "",
        requirement: "manager",
      },
    ]);
    expect(result.receiptVerified).toBe(true);
    expect(result.afterApproval).toBe("ALLOW");
    expect(lines).toContain("manager:lea approved: 1 of 2");
  });
});
