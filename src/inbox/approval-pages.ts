import type { IncomingMessage, ServerResponse } from "node:http";
import {
  approvalRun,
  approverActor,
  decideApproval,
  getApproval,
  getGrant,
  listApprovals,
  type Actor,
  type Approval,
  type AuthorityContext,
} from "../authority/index.js";
import { html, page } from "./html.js";
import { HttpError, readForm, redirect, securityHeaders, sendHtml } from "./http.js";
import { csrfMatches, type Session } from "./sessions.js";
import { approvalRow, decideForm, detailBody, listBody, stateText } from "./views.js";

/** Approval ids are Charter's (`apr_<uuid>`); anything else is refused before the store is asked. */
const APPROVAL_ID = /^[A-Za-z0-9_-]{1,128}$/;

/** The id of a path's last segment, checked. */
export function approvalIdOf(segment: string): string {
  let id: string;
  try {
    id = decodeURIComponent(segment);
  } catch {
    throw new HttpError(400, "the approval id is not valid");
  }
  if (!APPROVAL_ID.test(id)) throw new HttpError(400, "the approval id is not valid");
  return id;
}

/** The approvals waiting for `actor`, and the last ones decided. */
async function waiting(
  ctx: AuthorityContext,
  actor: Actor,
): Promise<{ pending: readonly Approval[]; recent: readonly Approval[] }> {
  const pending = (await listApprovals(ctx, { owner: "", status: "pending", pageSize: 100 }, actor))
    .approvals;
  const recent = (await listApprovals(ctx, { owner: "", pageSize: 20 }, actor)).approvals.filter(
    (a) => a.status !== "pending",
  );
  return { pending, recent };
}

/** GET /: what waits for the signed-in approver (the script adds new ones as they arrive). */
export async function listPage(
  ctx: AuthorityContext,
  session: Session & { principal: string },
  res: ServerResponse,
): Promise<void> {
  const { pending, recent } = await waiting(ctx, approverActor(session.principal));
  sendHtml(
    res,
    200,
    page("Approvals", listBody(pending, recent), {
      principal: session.principal,
      csrf: session.csrf,
    }),
  );
}

/** GET /partials/list: the pending rows as markup (escaped here), for the live list. */
export async function listPartial(
  ctx: AuthorityContext,
  principal: string,
  res: ServerResponse,
): Promise<void> {
  const { pending } = await waiting(ctx, approverActor(principal));
  sendJson(res, { html: html`${pending.map(approvalRow)}`.markup, count: pending.length });
}

/** GET /partials/approval/ID: an approval's state, for its live detail page. */
export async function approvalPartial(
  ctx: AuthorityContext,
  principal: string,
  id: string,
  res: ServerResponse,
): Promise<void> {
  const a = await getApproval(ctx, id, approverActor(principal));
  sendJson(res, {
    state: stateText(a).markup,
    count: `${a.approvedBy.length} of ${a.requiredApprovals} approvers`,
    pending: a.status === "pending",
  });
}

/** The grant's caveats (binds, constraints, rules) for the approval's action, as JSON text; undefined when none. */
export async function boundsOf(ctx: AuthorityContext, a: Approval): Promise<string | undefined> {
  const stored = await getGrant(ctx, a.grantId).catch(() => undefined);
  const caveats = stored?.grant.caveats;
  if (caveats === undefined || !Object.hasOwn(caveats, a.actionId)) return undefined;
  return JSON.stringify(caveats[a.actionId], null, 2);
}

const DONE: Readonly<Record<string, string>> = {
  approve: "Your approval is recorded.",
  reject: "Your rejection is recorded.",
};

/** GET /approvals/ID: one approval, with the form while it is pending. */
export async function detailPage(
  ctx: AuthorityContext,
  session: Session & { principal: string },
  id: string,
  done: string | null,
  res: ServerResponse,
): Promise<void> {
  const a = await getApproval(ctx, id, approverActor(session.principal));
  const bounds = await boundsOf(ctx, a);
  const run = await approvalRun(ctx, a);
  const notice = done !== null && Object.hasOwn(DONE, done) ? DONE[done] : undefined;
  const body = detailBody(a, {
    live: true,
    ...(bounds === undefined ? {} : { bounds }),
    ...(run === undefined ? {} : { run }),
    ...(a.status === "pending"
      ? { form: decideForm(`/approvals/${encodeURIComponent(a.id)}`, session.csrf) }
      : {}),
    ...(notice === undefined
      ? {}
      : { notice: html`<p class="notice" role="status">${notice}</p>` }),
  });
  sendHtml(res, 200, page(a.toolName, body, { principal: session.principal, csrf: session.csrf }));
}

/** The outcome and note of a decide form, checked; the CSRF token first. */
export async function decisionForm(
  req: IncomingMessage,
  session: Session | undefined,
): Promise<{ readonly outcome: "approve" | "reject"; readonly note: string }> {
  const form = await readForm(req);
  if (!csrfMatches(session, form.get("csrf")))
    throw new HttpError(403, "the form's CSRF token does not match this session; reload the page");
  const outcome = form.get("outcome");
  if (outcome !== "approve" && outcome !== "reject")
    throw new HttpError(400, 'outcome must be "approve" or "reject"');
  const note = form.get("note") ?? "";
  if (note.length > 1000) throw new HttpError(400, "the note must be at most 1000 characters");
  return { outcome, note };
}

/** POST /approvals/ID: the signed-in approver's answer, then back to the approval. */
export async function decide(
  ctx: AuthorityContext,
  session: Session & { principal: string },
  id: string,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const { outcome, note } = await decisionForm(req, session);
  await decideApproval(
    ctx,
    { approvalId: id, outcome, decidedBy: session.principal, note },
    approverActor(session.principal),
  );
  redirect(res, `/approvals/${encodeURIComponent(id)}?done=${outcome}`);
}

function sendJson(res: ServerResponse, body: unknown): void {
  res.writeHead(200, { ...securityHeaders(), "content-type": "application/json" });
  res.end(JSON.stringify(body));
}
