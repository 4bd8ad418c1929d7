import { createHmac, timingSafeEqual } from "node:crypto";
import type { ApproverDirectory } from "../core/approvers.js";
import { isJsonObject, type JsonObject } from "../core/json.js";
import { approverActor, decideApproval } from "./approvals.js";
import type { AuthorityContext } from "./context.js";
import { AuthorityError } from "./errors.js";

/** How far a Slack request's timestamp may be from now: five minutes, as Slack asks. */
export const SLACK_MAX_SKEW_SECONDS = 300;
/** The `action_id`s of the buttons Charter's Slack messages carry; their `value` is the approval id. */
export const SLACK_APPROVE_ACTION = "charter_approve";
export const SLACK_REJECT_ACTION = "charter_reject";
/** The largest interaction body accepted (Slack's are a few KiB). */
export const SLACK_MAX_BODY_BYTES = 64 * 1024;

/** A Slack interaction request as it arrived: its two signing headers and the raw body. */
export interface SlackRequest {
  /** `X-Slack-Request-Timestamp`. */
  readonly timestamp: string | undefined;
  /** `X-Slack-Signature`: `v0=<hex HMAC-SHA256 of "v0:<timestamp>:<body>">`. */
  readonly signature: string | undefined;
  /** The raw body, exactly as received (the signature covers these bytes). */
  readonly body: string;
}

/** What Slack actions need: the app's signing secret and, optionally, the one workspace accepted. */
export interface SlackSettings {
  readonly signingSecret: string;
  /** Slack's team id; when set, an interaction from another workspace is refused. */
  readonly teamId?: string;
}

/** The HTTP answer to give Slack: a status and a message for the clicker. */
export interface SlackAnswer {
  readonly status: number;
  readonly body: {
    readonly response_type: "ephemeral";
    readonly replace_original: false;
    readonly text: string;
  };
}

/**
 * Why a request does not come from Slack; undefined when it does. The signature is checked over
 * the raw body with the signing secret (constant-time), and the timestamp must be within five
 * minutes of `now` (a replayed request is refused).
 */
export function slackSignatureProblem(
  secret: string,
  req: SlackRequest,
  now: number,
): string | undefined {
  if (secret === "") return "Slack actions are not configured (slackSigningSecret)";
  const ts = req.timestamp ?? "";
  if (!/^\d{1,12}$/.test(ts)) return "X-Slack-Request-Timestamp is missing or malformed";
  if (Math.abs(now - Number(ts)) > SLACK_MAX_SKEW_SECONDS)
    return "X-Slack-Request-Timestamp is more than 5 minutes from now";
  const want = Buffer.from(
    `v0=${createHmac("sha256", secret).update(`v0:${ts}:${req.body}`).digest("hex")}`,
  );
  const got = Buffer.from(req.signature ?? "");
  if (got.length !== want.length || !timingSafeEqual(got, want))
    return "X-Slack-Signature does not verify";
  return undefined;
}

/**
 * Answers a Slack interaction (a click on a Charter message's approve or reject button). Only a
 * request Slack signed within five minutes is read; the clicker must be a Slack user the approver
 * directory maps to a principal (`slack:` of an entry), and the answer then goes through
 * `decideApproval` as that principal — the directory's roles, the requirement's count, the
 * owner and requester rules — exactly as the inbox's would. Any other click decides nothing.
 */
export async function answerSlackAction(
  ctx: AuthorityContext,
  settings: SlackSettings,
  req: SlackRequest,
): Promise<SlackAnswer> {
  const say = (status: number, text: string): SlackAnswer => ({
    status,
    body: { response_type: "ephemeral", replace_original: false, text },
  });
  if (Buffer.byteLength(req.body) > SLACK_MAX_BODY_BYTES)
    return say(413, "The request is too large.");
  const problem = slackSignatureProblem(settings.signingSecret, req, ctx.now());
  if (problem !== undefined) return say(401, problem);
  const click = readClick(req.body);
  if (typeof click === "string") return say(400, click);
  if (settings.teamId !== undefined && settings.teamId !== "" && click.teamId !== settings.teamId)
    return say(403, "This Slack workspace does not answer Charter's approvals.");
  const principal = principalOfSlackUser(ctx.policySet().approvers, click.userId);
  if (principal === undefined)
    return say(200, "Your Slack user is not an approver in Charter's approver directory.");
  try {
    const approval = await decideApproval(
      ctx,
      { approvalId: click.approvalId, outcome: click.outcome, decidedBy: principal, note: "" },
      approverActor(principal),
    );
    const count = `${approval.approvedBy.length} of ${approval.requiredApprovals}`;
    return say(
      200,
      `Recorded: ${principal} ${click.outcome}d. Approval ${approval.id} is ${approval.status} (${count}).`,
    );
  } catch (e) {
    if (e instanceof AuthorityError) return say(200, `Not recorded: ${e.message}`);
    throw e;
  }
}

/** The principal the directory maps a Slack user id to. */
export function principalOfSlackUser(
  directory: ApproverDirectory | undefined,
  userId: string,
): string | undefined {
  if (directory === undefined || userId === "") return undefined;
  for (const [principal, entry] of directory.approvers)
    if (entry.slackUserId === userId) return principal;
  return undefined;
}

interface Click {
  readonly userId: string;
  readonly teamId: string;
  readonly approvalId: string;
  readonly outcome: "approve" | "reject";
}

/** The click a `block_actions` payload carries, or what is wrong with it. */
function readClick(body: string): Click | string {
  const raw = new URLSearchParams(body).get("payload");
  if (raw === null) return "The request carries no payload.";
  let payload: unknown;
  try {
    payload = JSON.parse(raw);
  } catch {
    return "The payload is not JSON.";
  }
  if (!isJsonObject(payload) || payload["type"] !== "block_actions")
    return "Only block_actions interactions are answered.";
  const action = Array.isArray(payload["actions"]) ? payload["actions"][0] : undefined;
  const actionId = isJsonObject(action) ? action["action_id"] : undefined;
  const value = isJsonObject(action) ? action["value"] : undefined;
  const outcome =
    actionId === SLACK_APPROVE_ACTION
      ? "approve"
      : actionId === SLACK_REJECT_ACTION
        ? "reject"
        : undefined;
  if (outcome === undefined || typeof value !== "string" || !/^apr_[0-9a-f-]{1,64}$/.test(value))
    return "The action is not one of Charter's approve or reject buttons.";
  return {
    userId: idOf(payload["user"]),
    teamId: idOf(payload["team"]),
    approvalId: value,
    outcome,
  };
}

function idOf(value: JsonObject[string] | undefined): string {
  return isJsonObject(value) && typeof value["id"] === "string" ? value["id"] : "";
}
