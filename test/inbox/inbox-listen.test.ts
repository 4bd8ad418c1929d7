import { readFileSync, rmSync } from "node:fs";
import { request } from "node:https";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  authorize,
  createApprovalLink,
  issueGrant,
  type AuthorityContext,
} from "../../src/authority/index.js";
import { ConfigError } from "../../src/config/config.js";
import { makeTestPki, type TestPki } from "../support/certs.js";
import { startTestCharter, type TestCharter } from "../support/charter-server.js";
import { externalEmail, OWNER, startInboxCharter } from "./inbox-fixture.js";

// Where the inbox listens: loopback only without TLS (judged by what the name resolves to), and
// HTTPS with the gRPC port's certificate, its session cookie then `Secure`.

async function pendingId(ctx: AuthorityContext): Promise<string> {
  const { token } = await issueGrant(ctx, {
    profile: "owner-assistant",
    subject: "agent:worker-1",
    owner: OWNER,
    purpose: "inbox over TLS",
  });
  const { verdict } = await authorize(ctx, {
    grantToken: token,
    call: { callId: "c", toolName: "send_email", actionId: "", argumentsJson: externalEmail() },
  });
  if (verdict.approvalId === undefined) throw new Error("expected an approval");
  return verdict.approvalId;
}

describe("the inbox over TLS", () => {
  let pki: TestPki;
  let charter: TestCharter;
  beforeAll(async () => {
    pki = makeTestPki();
    charter = await startInboxCharter({
      config: { tlsCert: pki.serverCert, tlsKey: pki.serverKey, inboxListen: "localhost:0" },
    });
  });
  afterAll(async () => {
    await charter.stop();
    rmSync(pki.dir, { recursive: true, force: true });
  });

  it("serves HTTPS and sets its cookie Secure; links are https URLs", async () => {
    const ctx = charter.server.context;
    const inbox = charter.server.inboxUrl ?? "";
    expect(inbox).toMatch(/^https:\/\/(127\.0\.0\.1|\[::1\]):\d+$/);
    const { url } = await createApprovalLink(ctx, {
      approvalId: await pendingId(ctx),
      approver: OWNER,
    });
    expect(url.startsWith(`${inbox}/l/`)).toBe(true);
    const answer = await new Promise<{ status: number; cookie: string }>((resolve, reject) => {
      const req = request(url, { ca: readFileSync(pki.caCert), servername: "localhost" }, (res) => {
        res.resume();
        resolve({ status: res.statusCode ?? 0, cookie: String(res.headers["set-cookie"]) });
      });
      req.on("error", reject);
      req.end();
    });
    expect(answer.status).toBe(200);
    expect(answer.cookie).toMatch(/; HttpOnly; SameSite=Lax; Max-Age=\d+; Secure$/);
  });
});

describe("the inbox's address", () => {
  it("is refused on a non-loopback address without TLS, naming the fix", async () => {
    const started = startTestCharter({ config: { inboxListen: "0.0.0.0:0" } });
    await expect(started).rejects.toBeInstanceOf(ConfigError);
    await expect(started).rejects.toThrow(/configure tlsCert and tlsKey to serve it elsewhere/);
  });

  it("is refused when it is not host:port, or its port is taken", async () => {
    const first = await startInboxCharter();
    try {
      const taken = (first.server.inboxUrl ?? "").replace("http://", "");
      await expect(startTestCharter({ config: { inboxListen: taken } })).rejects.toThrow(
        /inboxListen: cannot listen on .* \(EADDRINUSE\)/,
      );
    } finally {
      await first.stop();
    }
  });
});
