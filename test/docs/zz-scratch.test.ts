import { createHash } from "node:crypto";
import { base64url } from "jose";
import { afterAll, beforeAll, it } from "vitest";
import { canonicalJson } from "../../src/core/digest.js";
import { startTestCharter, type TestCharter } from "../support/charter-server.js";

let charter: TestCharter;
beforeAll(async () => { charter = await startTestCharter(); });
afterAll(async () => { await charter.stop(); });
const dec = (s: string) => JSON.parse(new TextDecoder().decode(base64url.decode(s))) as unknown;

it("probe", async () => {
  const issued = await charter.clients.grants.issueGrant({ profile: "owner-assistant", subject: "agent:w", owner: "ana", purpose: "p" });
  const [h, p] = issued.grantToken.split(".");
  console.log("GRANT HEADER", JSON.stringify(dec(h!)));
  console.log("GRANT PAYLOAD keys", Object.keys(dec(p!) as object), JSON.stringify((dec(p!) as {grant: unknown}).grant).slice(0, 600));
  const a = await charter.clients.authority.authorize({ grantToken: issued.grantToken, call: { callId: "c1", toolName: "web_search", argumentsJson: '{"query":"x"}' } });
  console.log("ALLOW", JSON.stringify({ ...a.verdict, receipt: undefined, $typeName: undefined }));
  const [rh, rp] = a.verdict!.receipt.split(".");
  console.log("RECEIPT HEADER", JSON.stringify(dec(rh!)), "PAYLOAD", JSON.stringify(dec(rp!)));
  const g = (dec(p!) as { grant: { id: string } }).grant;
  const text = canonicalJson({ grantId: g.id, actionId: a.verdict!.actionId, arguments: { query: "x" } });
  console.log("CANON", text, createHash("sha256").update(text).digest("hex") === a.verdict!.callDigest);
  const u = await charter.clients.authority.authorize({ grantToken: issued.grantToken, call: { callId: "c2", toolName: "nope", argumentsJson: '{}' } });
  console.log("UNKNOWN", JSON.stringify({ ...u.verdict, $typeName: undefined }));
  const u2 = await charter.clients.authority.authorize({ grantToken: "", call: { callId: "c2", toolName: "web_search", argumentsJson: '{}' } });
  console.log("NOTOKEN", JSON.stringify({ ...u2.verdict, $typeName: undefined }));
  const r = await charter.clients.authority.authorize({ grantToken: issued.grantToken, call: { callId: "c3", toolName: "issue_refund", argumentsJson: JSON.stringify({ order_id: "ord_A1B2C3", amount: 250, currency: "EUR", reason: "damaged" }) }, approvalId: "apr_x" });
  console.log("APPROVAL", JSON.stringify({ ...r.verdict, $typeName: undefined }));
  try { await charter.clients.catalog.getCatalog({ grantToken: issued.grantToken, dialect: 99 }); } catch (e) { console.log("DIALECT", (e as {code: number; details: string}).code, (e as {details: string}).details); }
  try { await charter.clients.grants.issueGrant({ profile: "owner-assistant", subject: "s", owner: "o", mode: 7 }).then((x) => console.log("MODE7", x.grant?.mode)); } catch (e) { console.log("MODE7 err", e); }
  try { await charter.clients.grants.issueGrant({ profile: "  ", subject: "s", owner: "o" }); } catch (e) { console.log("WS", (e as {details: string}).details); }
  const jw = await charter.clients.keys.getJwks({});
  console.log("JWKS", jw.jwksJson);
});
