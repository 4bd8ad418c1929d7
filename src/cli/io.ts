/** Where a command writes: stdout for results, stderr for diagnostics. Tests pass buffers. */
export interface CliIo {
  readonly env: Readonly<Record<string, string | undefined>>;
  out(text: string): void;
  err(text: string): void;
}

export const processIo: CliIo = {
  env: process.env,
  out: (text) => process.stdout.write(text.endsWith("\n") ? text : `${text}\n`),
  err: (text) => process.stderr.write(text.endsWith("\n") ? text : `${text}\n`),
};
