import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { isLoadError } from "../../src/core/index.js";
import { loadWebhooksFile } from "../../src/load/webhooks.js";
import { startTestCharter } from "../support/charter-server.js";

const dir = mkdtempSync(join(tmpdir(), "charter-webhooks-doc-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SECRET = "a-secret-of-more-than-16-bytes";
const ENV = { HOOK_SECRET: SECRET, SLACK_URL: "https://hooks.slack.com/services/T0/B0/XYZSECRET" };

function file(text: string): string {
  const path = join(dir, `w-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(path, text);
  return path;
}

async function problems(text: string, env: Record<string, string> = ENV): Promise<string[]> {
  try {
    await loadWebhooksFile(file(text), env);
  } catch (err) {
    if (isLoadError(err)) return err.problems.map((p) => p.message);
    throw err;
  }
  throw new Error("expected a LoadError");
}

describe("loadWebhooksFile()", () => {
  it("reads webhooks with their defaults, the URL and secret from the environment", async () => {
    const set = await loadWebhooksFile(
      file(
        [
          "webhooks:",
          "  - { name: ops, url: 'https://hooks.example.com/c', format: json, secretEnv: HOOK_SECRET }",
          "  - { name: chat, urlEnv: SLACK_URL, format: slack, events: [created], owners: [ana@example.com] }",
          "delivery: { maxAttempts: 3 }",
        ].join("\n"),
      ),
      ENV,
    );
    const [ops, chat] = set.webhooks;
    expect(ops?.events).toEqual([
      "created",
      "approver_added",
      "decided",
      "expired",
      "consumed",
      "superseded",
    ]);
    expect(Buffer.from(ops?.secret ?? []).toString()).toBe(SECRET);
    expect(chat).toMatchObject({
      url: ENV.SLACK_URL,
      events: ["created"],
      owners: ["ana@example.com"],
    });
    expect(set.delivery).toMatchObject({ maxAttempts: 3, timeoutMs: 5000 });
  });

  it("refuses http:// off loopback, credentials in the URL, a json webhook without a secret", async () => {
    const found = await problems(
      [
        "webhooks:",
        "  - { name: a, url: 'http://hooks.example.com/c', format: slack }",
        "  - { name: b, url: 'https://user:pw@hooks.example.com/c', format: slack }",
        "  - { name: c, url: 'https://hooks.example.com/c', format: json }",
        "  - { name: d, url: 'http://127.0.0.1:9/c', format: json, secretEnv: UNSET_ONE }",
        "  - { name: d, url: 'ftp://x/', format: slack }",
      ].join("\n"),
    );
    expect(found).toEqual([
      "webhook a: its URL is http:// to a non-loopback host (use https)",
      "webhook b: its URL holds user:password@ (put credentials in the receiver's own secret, not the URL)",
      "webhook c: format json needs secretEnv (the signing secret's variable)",
      "webhook d: the environment variable UNSET_ONE is unset",
      "webhook d: the name is used twice",
      "webhook d: its URL must be https:// (or http:// to loopback)",
    ]);
    for (const p of found) expect(p).not.toContain("pw@");
  });

  it("never echoes a URL from the environment, and refuses a short secret", async () => {
    const found = await problems(
      [
        "webhooks:",
        "  - { name: chat, urlEnv: SLACK_URL, format: slack }",
        "  - { name: ops, url: 'https://x.example/', format: json, secretEnv: HOOK_SECRET }",
      ].join("\n"),
      { SLACK_URL: "http://hooks.slack.com/services/XYZSECRET", HOOK_SECRET: "short" },
    );
    expect(found).toEqual([
      "webhook chat: its URL (SLACK_URL) is http:// to a non-loopback host (use https)",
      "webhook ops: the secret in HOOK_SECRET is shorter than 16 bytes",
    ]);
  });

  it("checks the document against its schema: unknown keys, a secret written in the file", async () => {
    const found = await problems(
      ["webhooks:", "  - { name: ops, url: 'https://x.example/', format: json, secret: abc }"].join(
        "\n",
      ),
    );
    expect(found.join("\n")).toMatch(/must NOT have additional properties/);
    expect(found.join("\n")).not.toContain("abc");
  });

  it("stops the server's start when the document does not load", async () => {
    const bad = file("webhooks:\n  - { name: a, url: 'http://example.com/', format: slack }\n");
    await expect(
      startTestCharter({ dataDir: join(dir, "data"), config: { webhooks: bad } }),
    ).rejects.toThrow(/webhook a: its URL is http:\/\/ to a non-loopback host/);
  });
});
