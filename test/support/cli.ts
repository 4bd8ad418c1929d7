import type { CliIo } from "../../src/cli/io.js";
import { runCli } from "../../src/cli/main.js";

/** What one `charter` run printed and answered. */
export interface CliRun {
  readonly code: number;
  readonly out: string;
  readonly err: string;
}

/** Runs the CLI in process with `env` as its whole environment, capturing stdout and stderr. */
export async function runCapture(
  args: readonly string[],
  env: Readonly<Record<string, string>> = {},
): Promise<CliRun> {
  let out = "";
  let err = "";
  const io: CliIo = {
    env: { ...env },
    out: (t) => (out += `${t}\n`),
    err: (t) => (err += `${t}\n`),
  };
  const code = await runCli(args, io);
  return { code, out, err };
}
