import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { linkTokenHash } from "../../src/authority/index.js";
import { Decision } from "../../src/gen/charter/v1/common_pb.js";
import { CONTENT_SECURITY_POLICY } from "../../src/inbox/http.js";
import type { TestCharter } from "../support/charter-server.js";
import {
  HOSTILE_SUBJECT,
  inboxUrl,
  grantFor,
  linkFor,
  pendingApproval,
  sendEmail,
  startInboxCharter,
} from "./inbox-fixture.js";

// The inbox over plain HTTP (fetch), against a real Charter on port 0: the security properties
// of links, forms and pages. The browser flows are in inbox-browser.test.ts.
let charter: TestCharter;
beforeAll(async () => {
  charter = await startInboxCharter();
});
afterAll(async () => {
  await charter.stop();
});

/** GETs a link page: its status, body, session cookie and the form's CSRF token. */
async function open(url: string) {
  const res = await fetch(url);
  const body = await res.text();
  const cookie = (res.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
  const csrf = /name="csrf" value="([^"]+)"/.exec(body)?.[1];
  return { res, body, cookie, csrf };
}

async function post(url: string, cookie: string, fields: Record<string, string>) {
  return fetch(url, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie },
    body: new URLSearchParams(fields).toString(),
    redirect: "manual",
  });
}

async function statusOf(id: string) {
  return (await charter.clients.approvals.getApproval({ approvalId: id })).approval?.status;
}

describe("single-use links", () => {
  it("stores only the token's hash: the token is nowhere in the store file", async () => {
    const { id } = await pendingApproval(charter);
    const url = await linkFor(charter, id);
    const token = url.split("/l/")[1] as string;
    expect(url.startsWith(`${inboxUrl(charter)}/l/`)).toBe(true);
    const link = await charter.server.context.store.getApprovalLink(linkTokenHash(token));
    expect(link).toMatchObject({ approvalId: id, approver: "ana@example.com" });
    expect(await charter.server.context.store.getApprovalLink(token)).toBeUndefined();
    for (const file of ["charter.db", "charter.db-wal"]) {
      const bytes = readFileSync(join(charter.dataDir, file), { flag: "r" });
      expect(bytes.includes(Buffer.from(token))).toBe(false);
    }
  });

  it("decides nothing on GET: the approval stays pending, the link unused", async () => {
    const { id } = await pendingApproval(charter);
    const url = await linkFor(charter, id);
    for (let i = 0; i < 3; i++) expect((await open(url)).res.status).toBe(200);
    expect(await statusOf(id)).toBe(1); // pending
    const token = url.split("/l/")[1] as string;
    const link = await charter.server.context.store.getApprovalLink(linkTokenHash(token));
    expect(link?.usedAt).toBeUndefined();
  });

  it("decides once on POST; the link again answers 410, GET and POST alike", async () => {
    const { id, token, args } = await pendingApproval(charter);
    const url = await linkFor(charter, id);
    const { cookie, csrf } = await open(url);
    const first = await post(url, cookie, { csrf: csrf as string, outcome: "approve", note: "" });
    expect(first.status).toBe(200);
    expect(await statusOf(id)).toBe(2); // approved
    expect((await post(url, cookie, { csrf: csrf as string, outcome: "reject" })).status).toBe(410);
    expect((await open(url)).res.status).toBe(410);
    const retry = await sendEmail(charter, token, args, id);
    expect(retry.decision).toBe(Decision.ALLOW);
    const again = await sendEmail(charter, token, args, id);
    expect([again.decision, again.reason?.code]).toEqual([Decision.DENY, "APPROVAL_CONSUMED"]);
  });

  it("lets one of two racing POSTs decide; the other answers 410", async () => {
    const { id } = await pendingApproval(charter);
    const url = await linkFor(charter, id);
    const { cookie, csrf } = await open(url);
    const answers = await Promise.all([
      post(url, cookie, { csrf: csrf as string, outcome: "approve" }),
      post(url, cookie, { csrf: csrf as string, outcome: "reject" }),
    ]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 410]);
  });

  it("refuses a POST without the session's CSRF token (403) and changes nothing", async () => {
    const { id } = await pendingApproval(charter);
    const url = await linkFor(charter, id);
    const { cookie, csrf } = await open(url);
    expect((await post(url, cookie, { outcome: "approve" })).status).toBe(403);
    expect((await post(url, "", { csrf: csrf as string, outcome: "approve" })).status).toBe(403);
    expect((await post(url, cookie, { csrf: "x".repeat(43), outcome: "approve" })).status).toBe(
      403,
    );
    expect(await statusOf(id)).toBe(1);
    expect((await open(url)).res.status).toBe(200); // still usable
  });

  it("answers bad input with a clear 4xx and changes nothing", async () => {
    const { id } = await pendingApproval(charter);
    const url = await linkFor(charter, id);
    const { cookie, csrf } = await open(url);
    const c = csrf as string;
    const bad = await post(url, cookie, { csrf: c, outcome: "maybe" });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain("outcome must be");
    expect(
      (await post(url, cookie, { csrf: c, outcome: "approve", note: "n".repeat(1001) })).status,
    ).toBe(400);
    const big = await post(url, cookie, { csrf: c, outcome: "approve", note: "n".repeat(9000) });
    expect(big.status).toBe(413);
    const json = await fetch(url, {
      method: "POST",
      headers: { cookie, "content-type": "application/json" },
      body: "{}",
    });
    expect(json.status).toBe(415);
    expect((await fetch(`${inboxUrl(charter)}/l/${"A".repeat(43)}`)).status).toBe(404);
    expect((await fetch(url, { method: "PUT" })).status).toBe(405);
    expect(await statusOf(id)).toBe(1);
  });

  it("refuses a link for someone who could not answer, and for an unknown approval", async () => {
    const { id } = await pendingApproval(charter);
    await expect(linkFor(charter, id, "eve@example.com")).rejects.toThrow(/PERMISSION_DENIED/);
    await expect(linkFor(charter, "apr_nope")).rejects.toThrow(/NOT_FOUND/);
    await expect(linkFor(charter, id, " ")).rejects.toThrow(/approver: is required/);
  });
});

describe("pages", () => {
  it("carry a strict Content-Security-Policy and serve the script and styles as files", async () => {
    const { id } = await pendingApproval(charter);
    const { res, body } = await open(await linkFor(charter, id));
    expect(res.headers.get("content-security-policy")).toBe(CONTENT_SECURITY_POLICY);
    expect(CONTENT_SECURITY_POLICY).toContain("default-src 'none'");
    expect(CONTENT_SECURITY_POLICY).toContain("script-src 'self'");
    expect(CONTENT_SECURITY_POLICY).toContain("frame-ancestors 'none'");
    expect(body).not.toMatch(/<script>|<style|\sstyle=|\son[a-z]+=/i);
    expect(res.headers.get("set-cookie")).toMatch(/HttpOnly; SameSite=Lax/);
    const script = await fetch(`${inboxUrl(charter)}/static/inbox.js`);
    expect(script.headers.get("content-type")).toContain("text/javascript");
    expect(script.headers.get("content-security-policy")).toBe(CONTENT_SECURITY_POLICY);
  });

  it("show a summary with U+202E and <script> as visible, escaped text", async () => {
    const { id } = await pendingApproval(charter, HOSTILE_SUBJECT);
    const { body } = await open(await linkFor(charter, id));
    expect(body).not.toContain("\u202E");
    expect(body).not.toContain("<script>alert");
    expect(body).toContain("invoice \\u{202E}fdp.exe &lt;script&gt;alert(1)&lt;/script&gt;");
  });

  it("ask for sign-in without a session: 401 for the list's parts, a page for /", async () => {
    expect((await fetch(`${inboxUrl(charter)}/events`)).status).toBe(401);
    expect((await fetch(`${inboxUrl(charter)}/approvals/apr_x`)).status).toBe(401);
    const home = await fetch(inboxUrl(charter));
    expect(home.status).toBe(200);
    expect(await home.text()).toContain("single-use link");
  });
});

describe("honest states", () => {
  it("shows a superseded approval with its reason, and no form", async () => {
    const { id } = await pendingApproval(charter);
    const url = await linkFor(charter, id);
    const { approval } = await charter.clients.approvals.getApproval({ approvalId: id });
    await charter.clients.grants.revokeGrant({ grantId: approval?.grantId ?? "", reason: "test" });
    const { res, body } = await open(url);
    expect(res.status).toBe(200);
    expect(body).toMatch(
      /superseded —\s+GRANT_REVOKED: The grant this call was made under has been revoked\./,
    );
    expect(body).not.toContain('class="decide"');
  });
});

describe("an approval held for its run", () => {
  it("shows the run's allowed calls and the labels it has seen, by which call", async () => {
    const grantToken = await grantFor(charter);
    const call = async (callId: string, toolName: string, args: object) =>
      (
        await charter.clients.authority.authorize({
          grantToken,
          call: {
            callId,
            toolName,
            argumentsJson: JSON.stringify(args),
            step: { runId: "walk-1", of: { case: "toolCallId", value: callId } },
          },
        })
      ).verdict;
    await call("c1", "fetch_url", { url: "https://news.example.org/today" });
    await call("c2", "read_email", { message_id: "msg_7f3a9c21" });
    const held = await call("c3", "send_email", {
      to: "bo@example.com",
      subject: "Notes",
      body: "Hi",
    });
    expect(held?.decision).toBe(Decision.REQUIRE_APPROVAL);
    const { body } = await open(await linkFor(charter, held?.approvalId ?? ""));
    expect(body).toContain("<code>walk-1</code>");
    expect(body).toContain("2 calls allowed in it so far");
    expect(body).toMatch(/<strong>private<\/strong>, from <code>read_email<\/code> \(call 2\)/);
    expect(body).toMatch(/<strong>untrusted<\/strong>, from <code>fetch_url<\/code> \(call 1\)/);
  });
});
