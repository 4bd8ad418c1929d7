import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sendWebhook } from "../../src/authority/webhook-send.js";
import type { ApprovalEvent } from "../../src/core/approval.js";
import type { Webhook } from "../../src/core/webhook.js";

const EVENT: ApprovalEvent = {
  sequence: 3,
  kind: "created",
  at: 1_767_225_600,
  approval: {
    id: "apr_1",
    grantId: "grt_1",
    rootId: "grt_1",
    subject: "agent:a",
    owner: "ana@example.com",
    actionId: "payment.charge",
    toolName: "charge_payment",
    requirement: "owner",
    requiredApprovals: 1,
    callDigest: "sha256:abc",
    summary: [],
    status: "pending",
    createdAt: 1_767_225_600,
    expiresAt: 1_767_225_900,
    approvedBy: [],
  },
};

let server: Server;
let base = "";
let redirected = 0;
beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === "/hang") return; // never answers
    if (req.url === "/target") {
      redirected += 1;
      res.writeHead(204).end();
      return;
    }
    if (req.url === "/redirect") res.writeHead(302, { location: "/target" }).end();
    else res.writeHead(Number(req.url?.slice(1) ?? "500")).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const hook = (path: string): Webhook => ({
  name: "t",
  url: `${base}${path}`,
  format: "json",
  events: ["created"],
  secret: Buffer.from("0123456789abcdef"),
});
const send = (path: string, signal = new AbortController().signal) =>
  sendWebhook(hook(path), EVENT, {
    message: {},
    timeoutMs: 200,
    now: 1_767_225_601,
    signal,
    fetch,
  });

describe("sendWebhook()", () => {
  it("answers ok for a 2xx and a failure with the status otherwise", async () => {
    expect(await send("/204")).toEqual({ ok: true, httpStatus: 204 });
    expect(await send("/500")).toEqual({ ok: false, httpStatus: 500, detail: "HTTP 500" });
  });

  it("gives up an attempt at its time limit", async () => {
    expect(await send("/hang")).toEqual({ ok: false, detail: "timed out after 200 ms" });
  });

  it("does not follow a redirect", async () => {
    expect(await send("/redirect")).toMatchObject({ ok: false, httpStatus: 302 });
    expect(redirected).toBe(0);
  });

  it("is cut off when the deliverer stops", async () => {
    const stop = new AbortController();
    const attempt = send("/hang", stop.signal);
    stop.abort();
    expect(await attempt).toEqual({ ok: false, detail: "stopped" });
  });
});
