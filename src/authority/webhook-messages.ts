import type { ApprovalEvent, ApprovalEventKind } from "../core/approval.js";
import type { Approval } from "../core/approval.js";
import { displayJson, displayText } from "../core/display-text.js";
import { inboxLink, type Webhook } from "../core/webhook.js";
import { SLACK_APPROVE_ACTION, SLACK_REJECT_ACTION } from "./slack-actions.js";

/**
 * The approval as a webhook shows it: the safe summary only (ids, tool, requirement, status, k of
 * N, times, owner, subject, the argument summary an owner sees) with every text as
 * `displayText` shows it. Never the call's arguments.
 */
export function webhookApproval(a: Approval): Record<string, unknown> {
  const t = displayText;
  return {
    id: t(a.id),
    grantId: t(a.grantId),
    rootId: t(a.rootId),
    subject: t(a.subject),
    owner: t(a.owner),
    actionId: t(a.actionId),
    toolName: t(a.toolName),
    requirement: t(a.requirement),
    status: a.status,
    approvals: a.approvedBy.length,
    requiredApprovals: a.requiredApprovals,
    approvedBy: a.approvedBy.map(t),
    callDigest: a.callDigest,
    createdAt: a.createdAt,
    expiresAt: a.expiresAt,
    ...(a.decidedAt === undefined ? {} : { decidedAt: a.decidedAt }),
    ...(a.decidedBy === undefined ? {} : { decidedBy: t(a.decidedBy) }),
    ...(a.note === undefined ? {} : { note: t(a.note) }),
    ...(a.statusReason === undefined
      ? {}
      : { statusReason: { code: a.statusReason.code, message: t(a.statusReason.message) } }),
    summary: a.summary.map((s) =>
      s.shown === "value"
        ? { path: t(s.path), shown: "value", valueJson: displayJson(s.valueJson) }
        : s.shown === "digest"
          ? { path: t(s.path), shown: "digest", digest: s.digest }
          : { path: t(s.path), shown: "hidden" },
    ),
  };
}

/**
 * The `json` format's body (Standard Webhooks: `type`, `timestamp`, `data`): the event kind, its
 * sequence (the `webhook-id`), the approval's safe summary and, with an inbox, its link.
 */
export function webhookJsonBody(event: ApprovalEvent, linkBase?: string): string {
  const link = inboxLink(linkBase, event.approval.id);
  return JSON.stringify({
    type: `approval.${event.kind}`,
    timestamp: new Date(event.at * 1000).toISOString(),
    data: {
      sequence: event.sequence,
      kind: event.kind,
      approval: webhookApproval(event.approval),
      ...(link === undefined ? {} : { inboxUrl: link }),
    },
  });
}

/** Slack mrkdwn's control characters (&, <, >) escaped, after `displayText`: text from an approval stays text. */
export function slackText(text: string): string {
  return displayText(text).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

const HEADLINE: Readonly<Record<ApprovalEventKind, string>> = {
  created: "waits for approval",
  approver_added: "got one more approval",
  decided: "was decided",
  expired: "expired",
  consumed: "was used",
  superseded: "was superseded",
};

/**
 * The `slack` format's body: an incoming-webhook message, `text` (the notification's line) and
 * `blocks` (what waits, for whom, k of N, expiry, the argument summary, the inbox link as a
 * button). Every text that came from the approval is escaped for mrkdwn (`slackText`).
 */
export function webhookSlackBody(event: ApprovalEvent, options: MessageOptions = {}): string {
  const a = event.approval;
  const s = slackText;
  const line = `${s(a.toolName)} (${s(a.actionId)}) ${HEADLINE[event.kind]}: ${s(a.status)}, ${a.approvedBy.length} of ${a.requiredApprovals} ${s(a.requirement)} approval(s)`;
  const expires = new Date(a.expiresAt * 1000).toISOString();
  const summary = a.summary
    .map((e) =>
      e.shown === "value"
        ? `• ${s(e.path)}: ${s(displayJson(e.valueJson))}`
        : e.shown === "digest"
          ? `• ${s(e.path)}: (digest)`
          : `• ${s(e.path)}: (hidden)`,
    )
    .join("\n");
  const link = inboxLink(options.linkBase, a.id);
  const buttons = [
    ...(options.slackActions === true && a.status === "pending"
      ? [
          {
            type: "button",
            action_id: SLACK_APPROVE_ACTION,
            text: { type: "plain_text", text: "Approve" },
            style: "primary",
            value: a.id,
          },
          {
            type: "button",
            action_id: SLACK_REJECT_ACTION,
            text: { type: "plain_text", text: "Reject" },
            style: "danger",
            value: a.id,
          },
        ]
      : []),
    ...(link === undefined
      ? []
      : [{ type: "button", text: { type: "plain_text", text: "Open in the inbox" }, url: link }]),
  ];
  const blocks: unknown[] = [
    { type: "section", text: { type: "mrkdwn", text: `*${line}*` } },
    {
      type: "section",
      fields: [
        { type: "mrkdwn", text: `*Owner*\n${s(a.owner)}` },
        { type: "mrkdwn", text: `*Agent*\n${s(a.subject)}` },
        { type: "mrkdwn", text: `*Approvals*\n${a.approvedBy.length} of ${a.requiredApprovals}` },
        { type: "mrkdwn", text: `*Expires*\n${expires}` },
      ],
    },
    ...(summary === "" ? [] : [{ type: "section", text: { type: "mrkdwn", text: summary } }]),
    { type: "context", elements: [{ type: "mrkdwn", text: `Approval ${s(a.id)}` }] },
    ...(buttons.length === 0 ? [] : [{ type: "actions", elements: buttons }]),
  ];
  return JSON.stringify({
    text: link === undefined ? line : `${line} <${link}|Open in the inbox>`,
    blocks,
  });
}

/** What a message carries besides the event: the inbox link, Slack's approve and reject buttons. */
export interface MessageOptions {
  /** The inbox's public base URL: each message links its approval. */
  readonly linkBase?: string;
  /**
   * Slack messages of a pending approval carry Approve and Reject buttons (`charter_approve`,
   * `charter_reject`, the approval id as value), answered by the Slack actions endpoint: only
   * when it is configured (`slackSigningSecret`).
   */
  readonly slackActions?: boolean;
}

/** A webhook's body for `event`, in its format. */
export function webhookBody(
  hook: Webhook,
  event: ApprovalEvent,
  options: MessageOptions = {},
): string {
  return hook.format === "json"
    ? webhookJsonBody(event, options.linkBase)
    : webhookSlackBody(event, options);
}
