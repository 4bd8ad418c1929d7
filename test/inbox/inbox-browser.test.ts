import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Decision } from "../../src/gen/charter/v1/common_pb.js";
import { MAX_STREAMS_PER_PRINCIPAL } from "../../src/inbox/events.js";
import { launchBrowser, type TestBrowser } from "../support/browser.js";
import { FIXTURES, type TestCharter } from "../support/charter-server.js";
import { startOidcProvider, type TestOidcProvider } from "../support/oidc-provider.js";
import {
  HOSTILE_SUBJECT,
  OWNER,
  inboxUrl,
  linkFor,
  pendingApproval,
  pendingRefund,
  sendEmail,
  startInboxCharter,
} from "./inbox-fixture.js";

// The inbox in a real browser (Debian's Chromium via playwright-core) against a real Charter on
// port 0 and a local OpenID Provider: sign-in, live list, keyboard-only approval, links, states.
// CHARTER_WRITE_SCREENSHOTS=1 writes docs/img/inbox-list.png and docs/img/inbox-detail.png.
const ROOT = new URL("../../", import.meta.url).pathname;
const SCREENSHOTS = process.env.CHARTER_WRITE_SCREENSHOTS === "1";
const TTL = 300;
const clock = { now: Math.floor(Date.now() / 1000) };
let provider: TestOidcProvider;
let charter: TestCharter;
let browser: TestBrowser;
let page: Page;

beforeAll(async () => {
  provider = await startOidcProvider();
  charter = await startInboxCharter({
    now: () => clock.now,
    config: {
      approvalTtlSeconds: TTL,
      approvers: join(FIXTURES, "approvers.yaml"),
      inboxOidcIssuer: provider.issuer,
      inboxOidcClientId: provider.clientId,
      inboxOidcClientSecret: provider.clientSecret,
    },
  });
  provider.register(`${inboxUrl(charter)}/oidc/callback`);
  browser = await launchBrowser();
  page = await browser.context.newPage();
  if (process.env.DEBUG_INBOX === "1") {
    page.on("console", (m) => console.log("CONSOLE", m.text()));
    page.on("response", (r) => {
      console.log("RESP", r.status(), r.url());
      if (r.status() === 400) void r.text().then((t) => console.log("BODY", t));
    });
    page.on("requestfailed", (r) => console.log("REQFAILED", r.url(), r.failure()?.errorText));
  }
  page.on("dialog", () => {
    throw new Error("a dialog opened: text of the call ran as script");
  });
}, 60_000);
afterAll(async () => {
  await browser.close();
  await charter.stop();
  await provider.stop();
});

/** What has the keyboard focus, as text: its href, its value or its tag. */
const focused = (p: Page): Promise<string> =>
  p.evaluate<string>(
    "(() => { const e = document.activeElement; return e ? (e.getAttribute('href') || e.getAttribute('value') || e.tagName) : ''; })()",
  );

/** Presses Tab until `want` says the focus is where it should be (at most 40 times). */
async function tabTo(p: Page, want: (focus: string) => boolean): Promise<void> {
  for (let i = 0; i < 40; i++) {
    if (want(await focused(p))) return;
    await p.keyboard.press("Tab");
  }
  throw new Error(`the keyboard never reached the element (last focus: ${await focused(p)})`);
}

describe("the inbox in Chromium", () => {
  it("signs in through the OpenID Provider (authorization code with PKCE)", async () => {
    await page.goto(inboxUrl(charter));
    await page.getByRole("link", { name: "Sign in" }).click();
    await page.locator('input[name="login"]').fill(OWNER);
    await page.locator('input[name="password"]').fill("any");
    await page.getByRole("button", { name: "Sign-in" }).click();
    await page.getByRole("button", { name: "Continue" }).click();
    await page.waitForURL(`${inboxUrl(charter)}/`);
    await expect.poll(() => page.locator(".who").textContent()).toContain(`Signed in as ${OWNER}`);
    const cookies = await browser.context.cookies(inboxUrl(charter));
    // Cookies are per host, not per port: the provider's (on 127.0.0.1 too) are in the jar as well.
    const ours = cookies.filter((c) => c.name === "charter_inbox");
    expect(ours.map((c) => [c.httpOnly, c.sameSite])).toEqual([[true, "Lax"]]);
    expect(await page.evaluate("window.localStorage.length + window.sessionStorage.length")).toBe(
      0,
    );
  });

  it("shows a new pending approval live, then approves it with the keyboard alone", async () => {
    await page.goto(inboxUrl(charter));
    const { id, token, args } = await pendingApproval(charter);
    const row = page.locator(`li[data-id="${id}"]`);
    await row.waitFor({ timeout: 5000 });
    expect(await row.textContent()).toContain("send_email");
    if (SCREENSHOTS) {
      const second = await pendingApproval(charter, "Contract draft for review");
      await page.locator(`li[data-id="${second.id}"]`).waitFor({ timeout: 5000 });
      await screenshot(page, "inbox-list.png");
    }

    await tabTo(page, (f) => f === `/approvals/${id}`);
    await page.keyboard.press("Enter");
    await page.waitForURL(`${inboxUrl(charter)}/approvals/${id}`);
    await tabTo(page, (f) => f === "TEXTAREA");
    await page.keyboard.type("fine, once");
    await tabTo(page, (f) => f === "approve");
    await page.keyboard.press("Enter");
    await page.waitForURL(/done=approve/);
    expect((await page.locator("#state").textContent())?.trim()).toBe(
      "approved — waiting for the agent to retry",
    );
    expect((await sendEmail(charter, token, args, id)).decision).toBe(Decision.ALLOW);
    const again = await sendEmail(charter, token, args, id);
    expect([again.decision, again.reason?.code]).toEqual([Decision.DENY, "APPROVAL_CONSUMED"]);
    await page.reload();
    expect(await page.locator("#state").textContent()).toContain("approved and used");
  });

  it("shows a summary with U+202E and <script> as visible text, never as markup", async () => {
    const { id } = await pendingApproval(charter, HOSTILE_SUBJECT);
    const response = await page.goto(`${inboxUrl(charter)}/approvals/${id}`);
    expect(response?.headers()["content-security-policy"]).toContain("script-src 'self'");
    const summary = (await page.locator("table.summary").textContent()) ?? "";
    expect(summary).toContain('"invoice \\u{202E}fdp.exe <script>alert(1)</script>"');
    expect(summary).not.toContain("\u202E");
    expect(await page.locator("script").count()).toBe(1);
    if (SCREENSHOTS) await screenshot(page, "inbox-detail.png");
    // Readable on a phone: nothing wider than a 360 px screen.
    await page.setViewportSize({ width: 360, height: 740 });
    expect(
      await page.evaluate<number>("document.documentElement.scrollWidth - window.innerWidth"),
    ).toBeLessThanOrEqual(0);
    await page.setViewportSize({ width: 1000, height: 800 });
  });

  it("refuses a signed-in POST without the session's CSRF token, and changes nothing", async () => {
    const { id } = await pendingApproval(charter);
    const forged = await page.request.post(`${inboxUrl(charter)}/approvals/${id}`, {
      form: { outcome: "approve", note: "" },
      maxRedirects: 0,
    });
    expect(forged.status()).toBe(403);
    const { approval } = await charter.clients.approvals.getApproval({ approvalId: id });
    expect(approval?.approvedBy).toEqual([]);
  });

  it("caps the event streams one approver holds open (429 past the cap)", async () => {
    const session = (await browser.context.cookies(inboxUrl(charter))).find(
      (c) => c.name === "charter_inbox",
    );
    const stop = new AbortController();
    const statuses: number[] = [];
    try {
      for (let i = 0; i < MAX_STREAMS_PER_PRINCIPAL + 1; i++) {
        const res = await fetch(`${inboxUrl(charter)}/events`, {
          headers: { cookie: `charter_inbox=${session?.value ?? ""}` },
          signal: stop.signal,
        });
        statuses.push(res.status);
        if (res.status === 429) break;
      }
    } finally {
      stop.abort();
    }
    expect(statuses.at(-1)).toBe(429);
    expect(statuses.slice(0, -1).every((s) => s === 200)).toBe(true);
  });

  it("shows an approval whose time ran out as expired, without a form", async () => {
    const { id } = await pendingApproval(charter);
    clock.now += TTL + 1;
    await page.goto(`${inboxUrl(charter)}/approvals/${id}`);
    expect(await page.locator("#state").textContent()).toContain("expired");
    expect(await page.locator("form.decide").count()).toBe(0);
  });
});

describe("single-use links in Chromium", () => {
  it("approves through a link once: the agent's retry is allowed once, the link reused is 410", async () => {
    const { id, token, args } = await pendingApproval(charter);
    const url = await linkFor(charter, id);
    const linkPage = await browser.context.newPage();
    expect((await linkPage.goto(url))?.status()).toBe(200);
    expect(await linkPage.locator("#state").textContent()).toContain("0 of 1 approvers");
    await linkPage.getByRole("button", { name: "Approve" }).click();
    await linkPage.waitForLoadState();
    expect(await linkPage.locator(".notice").textContent()).toContain("approval is recorded");
    expect((await sendEmail(charter, token, args, id)).decision).toBe(Decision.ALLOW);
    expect((await sendEmail(charter, token, args, id)).decision).toBe(Decision.DENY);
    const reused = await linkPage.goto(url);
    expect(reused?.status()).toBe(410);
    expect(await linkPage.locator("h1").textContent()).toBe("This link is used up");
    await linkPage.close();
  });

  it("rejects through a link with a note; the agent's retry is denied", async () => {
    const { id, token, args } = await pendingApproval(charter);
    const linkPage = await browser.context.newPage();
    await linkPage.goto(await linkFor(charter, id));
    await linkPage.locator("#note").fill("not to that address");
    await linkPage.getByRole("button", { name: "Reject" }).click();
    await linkPage.waitForLoadState();
    expect(await linkPage.locator("#state").textContent()).toContain("rejected by ana@example.com");
    const retry = await sendEmail(charter, token, args, id);
    expect([retry.decision, retry.reason?.code]).toEqual([Decision.DENY, "APPROVAL_REJECTED"]);
    await linkPage.close();
  });
});

describe("an expired link in Chromium", () => {
  it("answers 410 once its time ran out, and decided nothing", async () => {
    const { id } = await pendingApproval(charter);
    const url = await linkFor(charter, id);
    clock.now += TTL + 1;
    const linkPage = await browser.context.newPage();
    expect((await linkPage.goto(url))?.status()).toBe(410);
    expect(await linkPage.locator(".message").textContent()).toContain("expired");
    await linkPage.close();
  });
});

describe("a 2-of-N approval in Chromium", () => {
  it("shows 1 of 2, then approved, live on the owner's page; the refund is allowed once", async () => {
    const { id, token, args } = await pendingRefund(charter);
    await page.goto(`${inboxUrl(charter)}/approvals/${id}`);
    expect(await page.locator(".count").textContent()).toBe("0 of 2 approvers");
    await expect(linkFor(charter, id, OWNER)).rejects.toThrow(/PERMISSION_DENIED/);
    for (const [manager, want] of [
      ["mgr1@example.com", "1 of 2 approvers"],
      ["mgr2@example.com", "approved — waiting for the agent to retry"],
    ] as const) {
      const linkPage = await browser.context.newPage();
      await linkPage.goto(await linkFor(charter, id, manager));
      await linkPage.getByRole("button", { name: "Approve" }).click();
      await linkPage.waitForLoadState();
      expect(await linkPage.locator("#state").textContent()).toContain(
        want.startsWith("approved") ? want : `waiting for approval — ${want}`,
      );
      await linkPage.close();
      // The owner's page follows the feed: the count, then the state, change without a reload.
      await expect
        .poll(() => page.locator("#state").textContent(), { timeout: 5000 })
        .toContain(want.startsWith("approved") ? want : `— ${want}`);
    }
    expect(await page.locator("form.decide").count()).toBe(0);
    const retry = await charter.clients.authority.authorize({
      grantToken: token,
      call: { callId: "refund-1", toolName: "issue_refund", argumentsJson: args },
      approvalId: id,
    });
    expect(retry.verdict?.decision).toBe(Decision.ALLOW);
  });
});

async function screenshot(p: Page, name: string): Promise<void> {
  mkdirSync(join(ROOT, "docs", "img"), { recursive: true });
  await p.screenshot({ path: join(ROOT, "docs", "img", name), fullPage: true });
}
