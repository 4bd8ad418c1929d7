import type { IncomingMessage, ServerResponse } from "node:http";
import {
  answerSlackAction,
  SLACK_MAX_BODY_BYTES,
  type AuthorityContext,
  type SlackSettings,
} from "../authority/index.js";
import { HttpError, readBody, securityHeaders } from "./http.js";

/**
 * `POST /slack/actions`: the request URL of a Slack app's interactivity. No session and no CSRF
 * token: the request is Slack's, proven by its signature over the raw body (checked, with the
 * clicker's mapping to an approver, by `answerSlackAction`). Off (404) without a signing secret.
 */
export async function slackActions(
  ctx: AuthorityContext,
  settings: SlackSettings | undefined,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  if (settings === undefined) throw new HttpError(404, "Slack actions are not configured.");
  const type = (req.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase();
  if (type !== "application/x-www-form-urlencoded")
    throw new HttpError(415, "Slack sends interactions as application/x-www-form-urlencoded");
  const body = await readBody(req, SLACK_MAX_BODY_BYTES);
  const answer = await answerSlackAction(ctx, settings, {
    timestamp: header(req, "x-slack-request-timestamp"),
    signature: header(req, "x-slack-signature"),
    body,
  });
  res.writeHead(answer.status, {
    ...securityHeaders(),
    "content-type": "application/json; charset=utf-8",
  });
  res.end(JSON.stringify(answer.body));
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return typeof value === "string" ? value : undefined;
}
