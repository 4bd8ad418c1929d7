/**
 * Runs the shell examples of a docs page as a reader would type them, with the real `charter` CLI
 * in process (`runCli`, the same code as `node dist/cli/bin.js`), and checks each `#   → …` line
 * against what the command before it printed. Only what the docs use is understood; any other
 * line is an error, so an example the runner cannot run fails the test instead of being skipped.
 *
 * Rules, in the order a line is read:
 * - `alias charter=…` and comment lines are read, not run; a comment `#   → EXPECTED` checks the
 *   last command: `ok: …` is its whole output, each UPPER_CASE code must be in it, the first
 *   `DECISION_*` fixes its exit code, and "the same decision" / "a new decision" compare its
 *   decision id with those printed before;
 * - `export NAME=VALUE` and `export NAME=$(charter …)` set the page's environment;
 * - `charter …` runs the CLI: `check` must exit 0–3 (as its expectation says), any other command 0;
 *   `NAME=value charter …` sets NAME for that command only;
 * - a placeholder word `prefix_…` (`apr_…`, `chk_…`, `key_…`) is the last `prefix_<id>` printed;
 * - `--server 127.0.0.1:50051` is a real server the runner starts on the page's data dir with the
 *   page's configuration, and the address is replaced by the one it bound;
 * - a file a command writes (`--out FILE`) goes to the page's scratch directory.
 * Every page runs in a scratch directory of its own, with `CHARTER_DATA_DIR` set inside it.
 */
import { join } from "node:path";
import { pino } from "pino";
import { expect } from "vitest";
import { startCharter, type RunningCharter } from "../../src/app/charter.js";
import { resolveConfig } from "../../src/config/config.js";
import { runCapture, type CliRun } from "../support/cli.js";

/** A command the runner does not run, and why (each must match some line of the docs). */
export interface NotRunnable {
  readonly pattern: RegExp;
  readonly reason: string;
}

/** The state of one page's run: its environment, what was printed, the server it started. */
export class PageRun {
  readonly env: Record<string, string>;
  private last: { run: CliRun; line: string } | undefined;
  private readonly printed: string[] = [];
  private readonly decisions = new Set<string>();
  private server: RunningCharter | undefined;
  /** Lines run (commands), and lines skipped by a NotRunnable rule, for the test's own checks. */
  readonly ran: string[] = [];
  readonly skipped: string[] = [];

  constructor(
    private readonly page: string,
    private readonly scratch: string,
    private readonly notRunnable: readonly NotRunnable[],
  ) {
    this.env = { CHARTER_DATA_DIR: join(scratch, "data") };
  }

  /** Runs one shell block of the page, line by line; `firstLine` is the 1-based line of its first line. */
  async runBlock(block: readonly string[], firstLine: number): Promise<void> {
    for (const { text, index } of joinContinuations(block))
      await this.runLine(text.trim(), `${this.page}:${firstLine + index}`);
  }

  async stop(): Promise<void> {
    await this.server?.stop(1_000);
    this.server = undefined;
  }

  private async runLine(line: string, where: string): Promise<void> {
    if (line === "" || /^alias charter=/.test(line)) return;
    if (line.startsWith("#")) {
      const expected = /^#\s+→ (.*)$/.exec(line)?.[1];
      if (expected !== undefined) this.check(expected, `${where}: ${line}`);
      return;
    }
    if (this.notRunnable.some((n) => n.pattern.test(line))) {
      this.skipped.push(line);
      return;
    }
    const exported = /^export (\w+)=(.*)$/.exec(line);
    if (exported) {
      const [, name, value] = exported as unknown as [string, string, string];
      const inner = /^\$\((charter .*)\)$/.exec(value.trim());
      if (inner) {
        const run = await this.charter(inner[1] as string, where);
        expect(run.code, `${where}: ${line}\n${run.err}`).toBe(0);
        this.env[name] = run.out.trim();
      } else this.env[name] = this.words(value)[0] ?? "";
      return;
    }
    const command = /^((?:\w+=\S*\s+)*)(charter\s.*)$/.exec(line);
    if (command) {
      const run = await this.charter(command[2] as string, where, command[1] ?? "");
      const isCheck = /^charter check\b/.test(command[2] as string);
      expect(isCheck ? [0, 1, 2, 3] : [0], `${where}: ${line} exited ${run.code}\n${run.err}`)
        // a deny (1), an approval (2) or a dry run (3) is an answer, not a failure
        .toContain(run.code);
      this.last = { run, line };
      const decisionId = /"decisionId": "([^"]+)"/.exec(run.out)?.[1];
      if (decisionId !== undefined) this.pendingDecision = decisionId;
      return;
    }
    throw new Error(
      `${where}: the runner cannot run "${line}": make it a charter command, or list it as not runnable (with the reason) in test/docs/shell-examples.test.ts`,
    );
  }

  private pendingDecision: string | undefined;

  /** Runs `charter …`; `assignments` (`NAME=value …`) set the environment of this command only. */
  private async charter(line: string, where: string, assignments = ""): Promise<CliRun> {
    const env = { ...this.env };
    for (const word of this.words(assignments)) {
      const eq = word.indexOf("=");
      env[word.slice(0, eq)] = word.slice(eq + 1);
    }
    const args = this.words(line).slice(1);
    const server = args.indexOf("--server");
    if (server >= 0 && args[server + 1] === "127.0.0.1:50051")
      args[server + 1] = await this.serverAddress();
    const out = args.indexOf("--out");
    if (out >= 0 && args[out + 1] !== undefined && !args[out + 1]?.startsWith("/"))
      args[out + 1] = join(this.scratch, args[out + 1] as string);
    // Commit the previous command's decision id before running the next one.
    if (this.pendingDecision !== undefined) this.decisions.add(this.pendingDecision);
    this.pendingDecision = undefined;
    const run = await runCapture(args, env);
    this.ran.push(`${where}: ${line}`);
    this.printed.push(run.out, run.err);
    return run;
  }

  /** A real server on the page's data dir and configuration, started at the first `--server`. */
  private async serverAddress(): Promise<string> {
    if (this.server === undefined) {
      const config = await resolveConfig({
        env: { ...this.env, CHARTER_LISTEN: "127.0.0.1:0", CHARTER_WORKERS: "1" },
      });
      this.server = await startCharter(config, { log: pino({ level: "silent" }) });
    }
    return `127.0.0.1:${this.server.port}`;
  }

  private check(expected: string, where: string): void {
    const last = this.last;
    if (last === undefined) throw new Error(`${where}: an expectation with no command before it`);
    const { run } = last;
    const text = run.out + run.err;
    if (expected.startsWith("ok:")) expect(run.out.trim(), where).toBe(expected);
    for (const code of expected.match(/\b[A-Z][A-Z_]{3,}\b/g) ?? [])
      expect(text, where).toContain(code);
    const decision = /\bDECISION_(ALLOW|DENY|REQUIRE_APPROVAL|EFFECT_SUPPRESSED)\b/.exec(expected);
    if (decision) {
      const exit = { ALLOW: 0, DENY: 1, REQUIRE_APPROVAL: 2, EFFECT_SUPPRESSED: 3 }[
        decision[1] as "ALLOW" | "DENY" | "REQUIRE_APPROVAL" | "EFFECT_SUPPRESSED"
      ];
      expect(run.code, `${where}: exit code`).toBe(exit);
    }
    const decisionId = /"decisionId": "([^"]+)"/.exec(run.out)?.[1] ?? "";
    if (expected.includes("the same decision"))
      expect(this.decisions.has(decisionId), `${where}: not a decision seen before`).toBe(true);
    if (expected.includes("a new decision"))
      expect(this.decisions.has(decisionId), `${where}: a decision seen before`).toBe(false);
  }

  /** Splits a command line into words: quotes kept whole, `$NAME` expanded, placeholders filled, comments dropped. */
  private words(line: string): string[] {
    const out: string[] = [];
    const re = /'([^']*)'|"((?:[^"\\]|\\.)*)"|(#.*$)|([^\s'"]+)/g;
    for (const m of line.matchAll(re)) {
      if (m[3] !== undefined) break;
      if (m[1] !== undefined) out.push(m[1]);
      else out.push(this.fill(this.expand(m[2] ?? m[4] ?? "")));
    }
    return out;
  }

  private expand(word: string): string {
    return word.replace(
      /\$(\w+)|\$\{(\w+)\}/g,
      (_, a: string | undefined, b: string | undefined) => {
        const name = (a ?? b) as string;
        const value = this.env[name];
        if (value === undefined) throw new Error(`${this.page}: $${name} is not set`);
        return value;
      },
    );
  }

  private fill(word: string): string {
    const placeholder = /^([a-z]+)_…$/.exec(word);
    if (!placeholder) return word;
    const prefix = placeholder[1] as string;
    const re = new RegExp(`\\b${prefix}_[A-Za-z0-9_-]+`, "g");
    const seen = this.printed.flatMap((t) => t.match(re) ?? []);
    const found = seen.at(-1);
    if (found === undefined) throw new Error(`${this.page}: nothing printed a ${prefix}_ id yet`);
    return found;
  }
}

/** Joins lines ending in a backslash with the next one, as the shell does; `index` is the first line's. */
function joinContinuations(lines: readonly string[]): { text: string; index: number }[] {
  const out: { text: string; index: number }[] = [];
  let pending = "";
  let start = 0;
  lines.forEach((line, i) => {
    if (pending === "") start = i;
    if (/\\\s*$/.test(line)) pending += `${line.replace(/\\\s*$/, "")} `;
    else {
      out.push({ text: pending + line, index: start });
      pending = "";
    }
  });
  if (pending !== "") out.push({ text: pending, index: start });
  return out;
}
