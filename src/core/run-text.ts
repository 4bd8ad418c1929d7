import { PRIVATE, UNTRUSTED, type RunView } from "./run.js";
import type { Rule } from "./policy.js";

// The run as text: what a model is told when a rule over the run decides its call, and the
// durations policies write (`1h`) and messages read ("1 hour").

/** The message of a call a rule over the run denies: why (the run's state), then the rule's reason. */
export function runDenyMessage(rule: Rule & { readonly then: "deny" }, run: RunView): string {
  const state = runStateText(rule, run);
  return state === "" ? rule.reason : `${state}. ${rule.reason}`;
}

/** The message of a call a rule over the run holds for approval, e.g. `This run has read …; "send_email" now needs the owner's approval.` */
export function runHoldMessage(
  rule: Rule,
  run: RunView,
  shownTool: string,
  requirement: string,
  ownerRequirement: string,
): string {
  const state = runStateText(rule, run);
  const needs =
    requirement === ownerRequirement
      ? "the owner's approval"
      : `approval (requirement "${requirement}")`;
  return `${state === "" ? "" : `${state}; `}${shownTool} now needs ${needs}.`;
}

/** How a label is named to a model: the two built-in ones in words, a deployment's own by name. */
function labelPhrase(label: string): string {
  if (label === UNTRUSTED) return "untrusted content";
  if (label === PRIVATE) return "private data";
  return `content labelled "${label}"`;
}

/**
 * What a model is told when a rule over the run holds a call: which labels the run has seen and
 * which calls brought them, e.g. `This run has read untrusted content (fetch_url, call 3) and
 * private data (read_email, call 5)`. Names and positions only, never argument values.
 */
export function runStateText(rule: Rule, run: RunView): string {
  const cond = rule.run;
  const parts: string[] = [];
  const seen = cond?.seen ?? [];
  // In the order the run met them: what it read first is named first.
  const named = seen
    .flatMap((l) => run.labels.filter((x) => x.label === l))
    .sort((a, b) => a.call - b.call)
    .map((s) => `${labelPhrase(s.label)} (${s.toolName || s.actionId}, call ${s.call})`);
  if (named.length > 0) parts.push(`This run has read ${joinAnd(named)}`);
  if (cond?.after) {
    const done = cond.after.filter((a) => run.last[a] !== undefined);
    if (done.length > 0) parts.push(`this run has already called ${joinAnd(done)}`);
  }
  if (cond?.window) {
    const w = cond.window;
    const limit =
      w.sum !== undefined
        ? `a total of ${w.sum.max} (${w.sum.path.slice(1)})`
        : `${w.maxCalls ?? 0} calls`;
    parts.push(`this call would go past ${limit} per ${w.per} in ${durationText(w.seconds)}`);
  }
  const text = parts.join("; ");
  return text === "" ? "" : text.charAt(0).toUpperCase() + text.slice(1);
}

function joinAnd(items: readonly string[]): string {
  if (items.length <= 1) return items.join("");
  return `${items.slice(0, -1).join(", ")} and ${items.at(-1) as string}`;
}

/** Seconds as the largest whole unit: 3600 -> "1 hour", 90 -> "90 seconds". */
export function durationText(seconds: number): string {
  const units: [number, string][] = [
    [86400, "day"],
    [3600, "hour"],
    [60, "minute"],
  ];
  for (const [size, name] of units)
    if (seconds % size === 0) {
      const n = seconds / size;
      return `${n} ${name}${n === 1 ? "" : "s"}`;
    }
  return `${seconds} seconds`;
}

/** `1h`, `30m`, `90s`, `2d` or a number of seconds -> seconds; undefined when it is none of them. */
export function parseDuration(raw: unknown): number | undefined {
  if (typeof raw === "number") return Number.isSafeInteger(raw) && raw > 0 ? raw : undefined;
  if (typeof raw !== "string") return undefined;
  const m = /^([1-9][0-9]{0,8})([smhd])$/.exec(raw);
  if (!m) return undefined;
  const size = { s: 1, m: 60, h: 3600, d: 86400 }[m[2] as "s" | "m" | "h" | "d"];
  return Number(m[1]) * size;
}
