import type { IncomingMessage, ServerResponse } from "node:http";
import {
  approvalRun,
  openApprovalLink,
  redeemApprovalLink,
  type AuthorityContext,
} from "../authority/index.js";
import { html, page, shown } from "./html.js";
import { HttpError, sendHtml, sessionCookie } from "./http.js";
import { boundsOf, decisionForm } from "./approval-pages.js";
import { SESSION_COOKIE, type Sessions } from "./sessions.js";
import { decideForm, detailBody, messageBody, stateText } from "./views.js";

const GONE = {
  used: "This link has been used already: a link decides once. Ask for a new one if the approval still waits.",
  expired: "This link has expired. Ask for a new one if the approval still waits.",
} as const;

function notFound(): HttpError {
  return new HttpError(404, "This link is not known. Check that it was copied whole.");
}

/**
 * GET /l/TOKEN: the approval the link is for and a confirm form — nothing is decided (a mail
 * scanner or a preview that follows the link changes nothing). A used or expired link is 410.
 */
export async function linkPage(
  ctx: AuthorityContext,
  sessions: Sessions,
  secure: boolean,
  token: string,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const opened = await openApprovalLink(ctx, token);
  if (opened.kind === "unknown") throw notFound();
  if (opened.kind === "gone") {
    sendHtml(res, 410, page("Link used up", messageBody("This link is used up", GONE[opened.why])));
    return;
  }
  const { session, created } = sessions.ensure(req);
  const a = opened.approval;
  const bounds = await boundsOf(ctx, a);
  const run = await approvalRun(ctx, a);
  const body = detailBody(a, {
    ...(bounds === undefined ? {} : { bounds }),
    ...(run === undefined ? {} : { run }),
    notice: html`<p class="notice">
      You answer as <strong>${shown(opened.link.approver)}</strong>, through a single-use link: the
      form below decides once.
    </p>`,
    ...(a.status === "pending" ? { form: decideForm(`/l/${token}`, session.csrf) } : {}),
  });
  sendHtml(
    res,
    200,
    page(a.toolName, body),
    created
      ? {
          "set-cookie": sessionCookie(SESSION_COOKIE, session.id, {
            secure,
            maxAgeSeconds: sessions.ttlSeconds,
          }),
        }
      : {},
  );
}

/**
 * POST /l/TOKEN: decides as the link's approver (from the stored link, never from the form), once;
 * the form must carry the CSRF token of the session the GET made. A used or expired link is 410.
 */
export async function redeemLink(
  ctx: AuthorityContext,
  sessions: Sessions,
  token: string,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const answer = await decisionForm(req, sessions.of(req));
  const outcome = await redeemApprovalLink(ctx, token, answer);
  if (outcome.kind === "unknown") throw notFound();
  if (outcome.kind === "gone") {
    sendHtml(
      res,
      410,
      page("Link used up", messageBody("This link is used up", GONE[outcome.why])),
    );
    return;
  }
  const a = outcome.approval;
  sendHtml(
    res,
    200,
    page(
      "Answer recorded",
      html`<h1>Answer recorded</h1>
        <p class="notice" role="status">
          Your ${answer.outcome === "approve" ? "approval" : "rejection"} is recorded. This link is
          now used.
        </p>
        <p class="state" id="state">${stateText(a)}</p>`,
    ),
  );
}
