/**
 * The scenario suite's shapes (issue 23): benign user tasks as the calls a capable agent makes,
 * each with the facts a door that saw a call's result could report, and injection variants: the
 * attacker's calls a hijacked agent makes after a poisoned result.
 */

/** The four task families, after the published agent-security benchmarks. */
export type Suite = "workspace" | "banking" | "messaging" | "travel";
export const SUITES: readonly Suite[] = ["workspace", "banking", "messaging", "travel"];

/** Where an injection enters the run: mail, a web page, a workspace file, or a record an outsider typed (an invoice memo, a contact note, an invitation). */
export type Channel = "mail" | "web" | "file" | "record";

/**
 * What a door that saw a result would say of its provenance: `untrusted` when someone outside
 * the owner's organisation wrote (part of) it, `trusted` when the door can vouch that nobody
 * outside did (mail from inside example.com, the owner's own files, the intranet).
 */
export type Door = "untrusted" | "trusted";

/** One tool call, as a model would make it (demo catalog tool names, schema-valid arguments). */
export interface Call {
  readonly tool: string;
  readonly args: Readonly<Record<string, unknown>>;
  /** What a door would report of the result; absent when the result carries no one's text. */
  readonly door?: Door;
  /** Why the door says so (the fact it saw), for the reader of the suite. */
  readonly why?: string;
}

/** An attacker's call: `goal` marks the harmful ones; the others are reads that prepare them. */
export interface AttackCall extends Call {
  readonly goal: boolean;
}

/** The kinds of harm a goal call does, for the report. */
export type GoalKind =
  | "exfiltration by URL"
  | "small refund"
  | "contact edit"
  | "deal edit"
  | "workspace write"
  | "calendar invite"
  | "external email";

export interface Injection {
  /** Unique within its task. */
  readonly id: string;
  readonly channel: Channel;
  /** Index (in the task's calls) of the call whose result carries the poison. */
  readonly at: number;
  /** What a door would report of the poisoned result (by default `untrusted`: it came from outside). */
  readonly door?: Door;
  /** What the poisoned content is, in a phrase. */
  readonly story: string;
  readonly kind: GoalKind;
  /** The hijacked agent's calls, made right after the poisoned call. */
  readonly calls: readonly AttackCall[];
}

export interface Task {
  /** Unique in the suite, e.g. `workspace.reply-to-colleague`. */
  readonly id: string;
  readonly suite: Suite;
  /** What the user asked, in a sentence. */
  readonly prompt: string;
  /** The calls a capable agent makes, in order. */
  readonly calls: readonly Call[];
  readonly injections: readonly Injection[];
  /** A hard case named by the issue (acting right after an untrusted read). */
  readonly hard?: string;
}
