import { execFile } from "node:child_process";
import { describe, expect, it } from "vitest";
import { COMMANDS, USAGE } from "../../src/cli/main.js";
import { runCapture } from "../support/cli.js";

// `--help` / `-h` on every command of the table the CLI dispatches from, through the built CLI as
// a process, and on every subcommand: the usage on stdout, nothing on stderr, exit 0, nothing run.

const BIN = new URL("../../dist/cli/bin.js", import.meta.url).pathname;

interface Run {
  readonly code: number | null;
  readonly out: string;
  readonly err: string;
}

/** Runs `node dist/cli/bin.js ...args` with no configuration in its environment. */
function charter(...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    const env = { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? "" };
    execFile(process.execPath, [BIN, ...args], { env, timeout: 10_000 }, (err, out, errOut) =>
      resolve({
        code: err ? (typeof err.code === "number" ? err.code : null) : 0,
        out,
        err: errOut,
      }),
    );
  });
}

const COMMAND_NAMES = Object.keys(COMMANDS);
const SUBCOMMANDS = Object.entries(COMMANDS).flatMap(([name, command]) =>
  Object.keys(command.subcommands ?? {}).map((sub) => [name, sub] as const),
);

describe.concurrent("charter <command> --help", () => {
  it("walks a table that has the commands and their subcommands", () => {
    expect(COMMAND_NAMES).toEqual(expect.arrayContaining(["serve", "check", "mcp-gateway"]));
    expect(SUBCOMMANDS).toEqual(
      expect.arrayContaining([
        ["approvals", "list"],
        ["keys", "create"],
      ]),
    );
  });

  it.each(COMMAND_NAMES.flatMap((name) => [[name, "--help"] as const, [name, "-h"] as const]))(
    "charter %s %s prints its usage and exits 0",
    async (name, flag) => {
      const run = await charter(name, flag);
      expect(run).toMatchObject({ code: 0, err: "" });
      expect(run.out).toMatch(new RegExp(`^usage: charter ${name}\\b`));
      expect(run.out).toContain("configuration flags");
    },
  );

  // In process: the same runCli that bin.js calls, without a process per subcommand and flag.
  it.each(
    SUBCOMMANDS.flatMap(([name, sub]) => [
      [name, sub, "--help"] as const,
      [name, sub, "-h"] as const,
    ]),
  )("charter %s %s %s prints the subcommand's usage and exits 0", async (name, sub, flag) => {
    const run = await runCapture([name, sub, flag]);
    expect(run).toMatchObject({ code: 0, err: "" });
    expect(run.out).toMatch(new RegExp(`^usage: charter ${name} ${sub}\\b`));
  });

  it.each([["--help"], ["-h"], ["help"]])(
    "charter %s prints every command and exits 0",
    async (flag) => {
      const run = await charter(flag);
      expect(run).toMatchObject({ code: 0, err: "", out: `${USAGE}\n` });
      for (const name of COMMAND_NAMES) expect(run.out).toMatch(new RegExp(`^  ${name} `, "m"));
    },
  );

  it("prints help however the other arguments look, and runs nothing", async () => {
    // serve would listen, keys create would write a key, check would need a token.
    for (const args of [
      ["serve", "--listen", "127.0.0.1:0", "--help"],
      ["keys", "create", "--principal", "p", "--role", "admin", "-h"],
      ["check", "--bogus", "--help"],
      ["approvals", "frobnicate", "--help"],
    ]) {
      const run = await runCapture(args);
      expect([args, run.code, run.err]).toEqual([args, 0, ""]);
      expect(run.out).toMatch(/^usage: charter /);
    }
  });

  it("leaves a --help after `--` to the upstream program of mcp-gateway", async () => {
    const run = await runCapture(["mcp-gateway", "--", "some-mcp-server", "--help"]);
    expect(run.code).toBe(64);
    expect(run.err).toMatch(/--token \(or CHARTER_TOKEN\) is required/);
  });

  it("answers `charter help COMMAND [SUBCOMMAND]` with the same text as --help", async () => {
    expect((await runCapture(["help", "check"])).out).toBe((await runCapture(["check", "-h"])).out);
    const sub = await runCapture(["help", "audit", "verify"]);
    expect([sub.code, sub.out]).toEqual([0, (await runCapture(["audit", "verify", "-h"])).out]);
    expect(await runCapture(["help", "frobnicate"])).toMatchObject({ code: 64 });
  });

  it("follows a usage error with that command's usage on stderr, exit 64", async () => {
    const run = await runCapture(["issue", "--subject", "s"]);
    expect(run.code).toBe(64);
    expect(run.out).toBe("");
    expect(run.err).toMatch(/^charter issue: --profile is required\n\nusage: charter issue /);
  });
});
