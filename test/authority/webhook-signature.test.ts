import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  signWebhook,
  verifyWebhook,
  webhookHeaders,
  WEBHOOK_TOLERANCE_SECONDS,
} from "../../src/authority/index.js";
import { webhookKey } from "../../src/load/webhooks.js";

const KEY = webhookKey(
  "whsec_" + Buffer.from("0123456789abcdef0123456789abcdef").toString("base64"),
);
const NOW = 1_767_225_600;
const BODY = '{"type":"approval.created","data":{"sequence":7}}';

describe("verifyWebhook()", () => {
  it("accepts a delivery signed with the key, within the tolerance", () => {
    const headers = webhookHeaders(KEY, "7", NOW, BODY);
    expect(headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(verifyWebhook(KEY, headers, BODY, NOW)).toBe(true);
    expect(verifyWebhook(KEY, headers, BODY, NOW + WEBHOOK_TOLERANCE_SECONDS)).toBe(true);
  });

  it("refuses a stale or future timestamp, even correctly signed", () => {
    const headers = webhookHeaders(KEY, "7", NOW, BODY);
    expect(verifyWebhook(KEY, headers, BODY, NOW + WEBHOOK_TOLERANCE_SECONDS + 1)).toBe(false);
    expect(verifyWebhook(KEY, headers, BODY, NOW - WEBHOOK_TOLERANCE_SECONDS - 1)).toBe(false);
  });

  it("refuses a forged signature, another key, a changed body, id or timestamp", () => {
    const headers = webhookHeaders(KEY, "7", NOW, BODY);
    const forged = { ...headers, "webhook-signature": `v1,${Buffer.alloc(32).toString("base64")}` };
    expect(verifyWebhook(KEY, forged, BODY, NOW)).toBe(false);
    expect(verifyWebhook(webhookKey("another-secret-of-16+"), headers, BODY, NOW)).toBe(false);
    expect(verifyWebhook(KEY, headers, BODY.replace("7", "8"), NOW)).toBe(false);
    expect(verifyWebhook(KEY, { ...headers, "webhook-id": "8" }, BODY, NOW)).toBe(false);
    const later = { ...headers, "webhook-timestamp": String(NOW + 1) };
    expect(verifyWebhook(KEY, later, BODY, NOW)).toBe(false);
    expect(verifyWebhook(KEY, { ...headers, "webhook-signature": "" }, BODY, NOW)).toBe(false);
    expect(verifyWebhook(KEY, {}, BODY, NOW)).toBe(false);
  });

  it("accepts any one of several space-separated signatures (key rotation)", () => {
    const headers = webhookHeaders(KEY, "7", NOW, BODY);
    const old = signWebhook(webhookKey("the-old-secret-16+"), "7", NOW, BODY);
    const both = { ...headers, "webhook-signature": `${old} ${signWebhook(KEY, "7", NOW, BODY)}` };
    expect(verifyWebhook(KEY, both, BODY, NOW)).toBe(true);
  });

  it("signs id.timestamp.body with HMAC-SHA256, base64 (the Standard Webhooks scheme)", async () => {
    const { createHmac } = await import("node:crypto");
    const mac = createHmac("sha256", KEY).update(`7.${NOW}.${BODY}`).digest("base64");
    expect(signWebhook(KEY, "7", NOW, BODY)).toBe(`v1,${mac}`);
  });
});

describe("the verifier docs/approvals.md gives receivers", () => {
  it("is a verifier: it accepts Charter's signature and refuses a stale or forged one", async () => {
    const doc = readFileSync(new URL("../../docs/approvals.md", import.meta.url), "utf8");
    const section = doc.slice(doc.indexOf("### Format `json` and its signature"));
    const code = /```ts\n([\s\S]*?)```/.exec(section)?.[1] ?? "";
    expect(code).toContain("function verifyWebhook(");
    const dir = mkdtempSync(join(tmpdir(), "charter-doc-verifier-"));
    try {
      const file = join(dir, "verify.ts");
      writeFileSync(file, `${code}\nexport { verifyWebhook };\n`);
      const copied = (await import(/* @vite-ignore */ file)) as {
        verifyWebhook: (
          key: Uint8Array,
          h: Record<string, string | undefined>,
          body: string,
          now?: number,
        ) => boolean;
      };
      const headers = webhookHeaders(KEY, "7", NOW, BODY);
      expect(copied.verifyWebhook(KEY, headers, BODY, NOW)).toBe(true);
      expect(copied.verifyWebhook(KEY, headers, BODY, NOW + 301)).toBe(false);
      const forged = { ...headers, "webhook-signature": signWebhook(KEY, "8", NOW, BODY) };
      expect(copied.verifyWebhook(KEY, forged, BODY, NOW)).toBe(false);
      expect(copied.verifyWebhook(KEY, headers, `${BODY} `, NOW)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
