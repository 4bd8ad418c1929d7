import {
  displayJson,
  type Approval,
  type ApprovalRun,
  type ArgumentSummary,
} from "../authority/index.js";
import { html, raw, shown, type Html } from "./html.js";

/** What an approval's state means to its approver, in words: honest about every status. */
export function stateText(a: Approval): Html {
  switch (a.status) {
    case "pending":
      return html`waiting for approval — ${a.approvedBy.length} of ${a.requiredApprovals} approvers`;
    case "approved":
      return html`approved — waiting for the agent to retry`;
    case "consumed":
      return html`approved and used: the agent made the call`;
    case "rejected":
      return html`rejected${a.decidedBy === undefined ? "" : html` by ${shown(a.decidedBy)}`}`;
    case "expired":
      return html`expired — nobody decided in time; the call was not made`;
    case "superseded":
      return html`superseded —
      ${a.statusReason ? html`${shown(a.statusReason.code)}: ${shown(a.statusReason.message)}` : "no longer approvable"}`;
    default:
      return html`${shown(String(a.status))}`;
  }
}

/** A time as UTC text, and the machine value the script counts down from. */
function when(unixSeconds: number): Html {
  const iso = new Date(unixSeconds * 1000).toISOString();
  return html`<time datetime="${iso}">${iso.replace("T", " ").slice(0, 19)} UTC</time>`;
}

/** One row of the list: what waits, by owner, risk (the requirement) and expiry. */
export function approvalRow(a: Approval): Html {
  return html`<li class="approval status-${a.status}" data-id="${a.id}">
    <a href="/approvals/${encodeURIComponent(a.id)}"
      ><span class="tool">${shown(a.toolName)}</span></a
    >
    <span class="meta"
      >owner ${shown(a.owner)} · requirement ${shown(a.requirement)} · ${a.approvedBy.length} of
      ${a.requiredApprovals}</span
    >
    <span class="state">${stateText(a)}</span>
    <span class="expiry"
      >expires
      <span class="countdown" data-expires="${a.expiresAt}">${when(a.expiresAt)}</span></span
    >
  </li>`;
}

/** The list page's body: the approvals waiting, newest first, and those recently decided. */
export function listBody(pending: readonly Approval[], recent: readonly Approval[]): Html {
  return html`<h1>What waits for you</h1>
    <p class="live" id="live" aria-live="polite" data-events="/events">
      ${pending.length === 0 ? "Nothing waits for you now." : ""}
    </p>
    <ul class="approvals" id="pending">
      ${pending.map(approvalRow)}
    </ul>
    ${
      recent.length === 0
        ? html``
        : html`<h2>Recently</h2>
            <ul class="approvals">
              ${recent.map(approvalRow)}
            </ul>`
    }`;
}

/** A shown value: a string as its text in quotes (escaped for display), anything else as JSON. */
function valueText(valueJson: string): Html {
  let value: unknown;
  try {
    value = JSON.parse(valueJson);
  } catch {
    value = undefined;
  }
  return typeof value === "string" ? shown(`"${value}"`) : shown(displayJson(valueJson));
}

/** Multi-line text, each line escaped for display, the line breaks kept. */
function lines(text: string): Html {
  return html`${text.split("\n").map((line, i) => html`${i > 0 ? raw("\n") : ""}${shown(line)}`)}`;
}

function summaryRow(s: ArgumentSummary): Html {
  const value =
    s.shown === "value"
      ? html`<code>${valueText(s.valueJson)}</code>${s.truncated ? " (cut)" : ""}`
      : s.shown === "digest"
        ? html`<span class="digest">not shown (${shown(s.digest)})</span>`
        : html`<span class="hidden">secret: never shown</span>`;
  return html`<tr>
    <th scope="row"><code>${shown(s.path === "" ? "(arguments)" : s.path)}</code></th>
    <td>${value}</td>
  </tr>`;
}

/** What an approval's detail shows besides its form: the call, its bounds, its count and time. */
export function detailBody(
  a: Approval,
  context: {
    readonly bounds?: string;
    /** The run the call belongs to, when it carries one. */
    readonly run?: ApprovalRun;
    readonly form?: Html;
    readonly notice?: Html;
    /** The page follows the approval feed (a signed-in approver's; a link's page does not). */
    readonly live?: boolean;
  },
): Html {
  return html`<h1>
      <code>${shown(a.toolName)}</code> <span class="action">(${shown(a.actionId)})</span>
    </h1>
    ${context.notice ?? html``}
    <p
      class="state"
      id="state"
      data-id="${a.id}"
      ${context.live === true ? raw(' data-events="/events"') : ""}
    >
      ${stateText(a)}
    </p>
    <dl class="facts">
      <dt>Agent</dt>
      <dd>${shown(a.subject)}</dd>
      <dt>Owner</dt>
      <dd>${shown(a.owner)}</dd>
      <dt>Requirement</dt>
      <dd>
        ${shown(a.requirement)}:
        <strong class="count">${a.approvedBy.length} of ${a.requiredApprovals} approvers</strong
        >${a.approvedBy.length > 0 ? html` (${a.approvedBy.map((p, i) => html`${i > 0 ? ", " : ""}${shown(p)}`)})` : ""}
      </dd>
      <dt>Expires</dt>
      <dd><span class="countdown" data-expires="${a.expiresAt}">${when(a.expiresAt)}</span></dd>
      <dt>Grant</dt>
      <dd><code>${a.grantId}</code> (task <code>${a.rootId}</code>)</dd>
      <dt>Call digest</dt>
      <dd><code class="digest">${a.callDigest}</code></dd>
      ${
        a.note === undefined
          ? html``
          : html`<dt>Note</dt>
              <dd>${shown(a.note)}</dd>`
      }
    </dl>
    <h2>Arguments</h2>
    <table class="summary">
      <tbody>
        ${
          a.summary.length === 0
            ? html`<tr>
                <td>no arguments</td>
              </tr>`
            : a.summary.map(summaryRow)
        }
      </tbody>
    </table>
    <details class="bounds">
      <summary>The grant's bounds for this action</summary>
      ${context.bounds === undefined ? html`<p>none: the catalog's input schema alone</p>` : html`<pre>${lines(context.bounds)}</pre>`}
    </details>
    ${runSection(context.run)} ${context.form ?? html``}`;
}

/** The run of the call: the calls allowed in it so far and the labels it has seen, by which call. */
export function runSection(run: ApprovalRun | undefined): Html {
  if (run === undefined)
    return html`<h2>Run</h2>
      <p>This call belongs to no run.</p>`;
  const labels =
    run.labels.length === 0
      ? html`<p>No label seen yet.</p>`
      : html`<ul class="labels">
          ${run.labels.map((l) => html`<li><strong>${shown(l.label)}</strong>, from <code>${shown(l.toolName)}</code> (call ${l.call})</li>`)}
        </ul>`;
  return html`<h2>Run <code>${shown(run.runId)}</code></h2>
    <p class="run">
      ${run.calls} call${run.calls === 1 ? "" : "s"} allowed in it so far; what it has read:
    </p>
    ${labels}`;
}

/** The approve/reject form: a note, two buttons, the session's CSRF token. */
export function decideForm(action: string, csrf: string): Html {
  return html`<form method="post" action="${action}" class="decide">
    <input type="hidden" name="csrf" value="${csrf}" />
    <label for="note">Note (optional)</label>
    <textarea id="note" name="note" maxlength="1000" rows="2"></textarea>
    <div class="buttons">
      <button type="submit" name="outcome" value="approve" class="approve">Approve</button>
      <button type="submit" name="outcome" value="reject" class="reject">Reject</button>
    </div>
  </form>`;
}

/** A short message page's body. */
export function messageBody(title: string, text: string, more: Html = raw("")): Html {
  return html`<h1>${title}</h1>
    <p class="message">${text}</p>
    ${more}`;
}
