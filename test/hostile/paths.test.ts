import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Decision, Dialect } from "../../src/gen/charter/v1/common_pb.js";
import { startTestCharter, type TestCharter } from "../support/charter-server.js";

// The demo policy's workspace rule (`pathWithin: /workspace`) against the path variants of issue 10.
let charter: TestCharter;
let grantToken: string;
beforeAll(async () => {
  charter = await startTestCharter();
  ({ grantToken } = await charter.clients.grants.issueGrant({
    profile: "owner-assistant",
    subject: "agent:paths",
    owner: "ana@example.com",
    purpose: "paths",
  }));
});
afterAll(async () => {
  await charter.stop();
});

async function readFile(path: string) {
  const items = [
    { call: { callId: "c", toolName: "read_file", argumentsJson: JSON.stringify({ path }) } },
  ];
  const { verdicts } = await charter.clients.authority.batchAuthorize({ grantToken, items });
  return verdicts[0];
}

describe("pathWithin on the demo workspace rule", () => {
  it.each([
    ["/workspace/../etc/passwd", "holds a . or .. segment"],
    ["/workspace/..%2fetc/passwd", "percent sign"],
    ["/workspace/%2e%2e/etc/passwd", "percent sign"],
    ["/workspace\\..\\etc\\passwd", "backslash"],
    ["/workspace/\uff0e\uff0e/etc/passwd", "NFKC"],
    ["/workspace/notes.txt\u0000/../../etc/passwd", "NUL"],
    ["/workspace/./notes.txt", "holds a . or .. segment"],
    ["/workspace//etc", "empty segment"],
    // Issue 22 finding 10: a mark or an invisible code point next to `..`.
    ["/workspace/\u0301../etc/passwd", "combining mark"],
    ["/workspace/..\u0301/etc/passwd", "combining mark"],
    ["/workspace/.\u200b./etc/passwd", "default-ignorable"],
    ["/workspace/\u2060../etc/passwd", "default-ignorable"],
    ["/workspace/..\ufe0f/etc/passwd", "combining mark"],
    ["/workspace/..\u00ad/etc/passwd", "default-ignorable"],
    ["/workspace/\u202e../etc/passwd", "bidi control"],
    ["/workspace/\u2066../etc/passwd", "bidi control"],
    ["/workspace/..\u0085/etc/passwd", "control character"],
    ["/workspace/..\u2028/etc/passwd", "line or paragraph separator"],
    ["/workspacex/notes.txt", "is outside"],
    ["/etc/passwd", "is outside"],
  ])("refuses %j (%s) with CONSTRAINT_VIOLATION", async (path, why) => {
    const verdict = await readFile(path);
    expect(verdict).toMatchObject({
      decision: Decision.DENY,
      reason: { code: "CONSTRAINT_VIOLATION" },
      receipt: "",
    });
    expect(verdict?.reason?.message).toContain(why);
    expect(verdict?.reason?.message).not.toContain("passwd");
  });

  it.each([
    "/workspace",
    "/workspace/",
    "/workspace/notes/todo.txt",
    "/workspace/café/menu.txt",
    "/workspace/東京/資料.txt",
    "/workspace/😀/x",
    "/workspace/..hidden/x",
  ])("allows %j", async (path) => {
    expect(await readFile(path)).toMatchObject({ decision: Decision.ALLOW });
  });

  it("shows the model a pattern for the root, not the Charter keyword", async () => {
    const { view } = await charter.clients.catalog.getCatalog({
      grantToken,
      dialect: Dialect.OPENAI_CHAT,
    });
    const schema = JSON.parse(
      view?.tools.find((t) => t.name === "read_file")?.inputSchemaJson ?? "{}",
    ) as { properties: { path: Record<string, unknown> } };
    expect(schema.properties.path).toMatchObject({
      pattern: "^/",
      allOf: [{ pattern: "^\\/workspace(/|$)" }],
    });
    expect(JSON.stringify(schema)).not.toContain("pathWithin");
  });
});
