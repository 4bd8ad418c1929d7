import { spawn } from "node:child_process";
import { constants, realpathSync, statSync } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import { basename, dirname, join, relative, isAbsolute } from "node:path";
import {
  witnessArchiveLine,
  witnessCheckpointLine,
  type WitnessedArchive,
  type WitnessedCheckpoint,
} from "../authority/index.js";
import { ConfigError } from "../config/config.js";

/** How long one run of `auditWitnessCommand` may take before it is killed and counted as failed. */
export const WITNESS_COMMAND_TIMEOUT_MS = 10_000;

/** Failed deliveries kept for the next checkpoint to retry, per witness (older ones are dropped: a later checkpoint covers them). */
const MAX_PENDING = 64;

/**
 * The witnesses outside the store that signed checkpoints also go to, so that whoever can write
 * the store cannot cut or rewrite what a checkpoint covers unnoticed (`charter audit verify --witness`).
 */
export interface AuditWitness {
  /** Hands a checkpoint to every witness, after those that failed before; never throws (a failure is logged, counted, and retried at the next checkpoint). */
  witness(checkpoint: WitnessedCheckpoint): Promise<void>;
  /** Records an archive run with every witness (`charter audit archive`, before it prunes); throws when one cannot take it. */
  archived(archive: WitnessedArchive): Promise<void>;
  /** Deliveries that failed so far (the `charter_audit_witness_failures_total` metric). */
  failures(): number;
  close(): Promise<void>;
}

export interface AuditWitnessOptions {
  /** `auditWitnessFile`: an append-only JSON-lines file outside the data dir; "" for none. */
  readonly file: string;
  /** `auditWitnessCommand`: an argv run per checkpoint with it on stdin; empty for none. */
  readonly command: readonly string[];
  readonly dataDir: string;
  /** Where a failed delivery is reported (the server logs it at error). */
  readonly onError: (message: string) => void;
  readonly commandTimeoutMs?: number;
}

/** `auditWitnessCommand`'s text (a JSON array of strings) as an argv; a ConfigError when it is not one. */
export function parseWitnessCommand(text: string): readonly string[] {
  if (text === "") return [];
  let argv: unknown;
  try {
    argv = JSON.parse(text);
  } catch {
    argv = undefined;
  }
  if (
    !Array.isArray(argv) ||
    argv.length === 0 ||
    !argv.every((a): a is string => typeof a === "string") ||
    argv[0] === ""
  )
    throw new ConfigError(
      `auditWitnessCommand must be a JSON array of strings, the program first (["/usr/local/bin/ship-checkpoint","--to","audit-host"])`,
    );
  return argv;
}

/** Resolves a path through the symlinks of the part of it that exists. */
function resolvedPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    const parent = dirname(path);
    return parent === path ? path : join(resolvedPath(parent), basename(path));
  }
}

/**
 * The witness file checked at load: not inside the data dir (whoever writes the store would
 * write it too), its directory present, and when it exists a regular file no other user may write.
 */
function checkWitnessFile(file: string, dataDir: string): void {
  const inside = relative(resolvedPath(dataDir), resolvedPath(file));
  if (inside === "" || (!inside.startsWith("..") && !isAbsolute(inside)))
    throw new ConfigError(
      `auditWitnessFile ${file} is inside the data dir ${dataDir}: a witness must be out of reach of whoever can write the store; put it in another directory (better, on another machine's mount)`,
    );
  const dir = statSync(dirname(file), { throwIfNoEntry: false });
  if (dir?.isDirectory() !== true)
    throw new ConfigError(
      `auditWitnessFile ${file}: its directory ${dirname(file)} does not exist`,
    );
  const stat = statSync(file, { throwIfNoEntry: false });
  if (stat === undefined) return;
  if (!stat.isFile()) throw new ConfigError(`auditWitnessFile ${file} is not a regular file`);
  if ((stat.mode & 0o022) !== 0)
    throw new ConfigError(
      `auditWitnessFile ${file} can be written by other users (mode 0${(stat.mode & 0o777).toString(8)}): chmod 600 ${file}`,
    );
}

/** One witness: delivers lines in order, keeping what failed for the next time. */
function retrying(
  name: string,
  deliver: (line: string) => Promise<void>,
  onFailure: (m: string) => void,
) {
  const pending: string[] = [];
  return async (line: string): Promise<void> => {
    pending.push(line);
    if (pending.length > MAX_PENDING) pending.splice(0, pending.length - MAX_PENDING);
    while (pending.length > 0) {
      try {
        await deliver(pending[0] ?? "");
      } catch (err) {
        onFailure(
          `audit witness ${name} failed (${(err as Error).message}); ${pending.length} checkpoint(s) will be retried at the next checkpoint`,
        );
        return;
      }
      pending.shift();
    }
  };
}

function runCommand(argv: readonly string[], input: string, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const [program = "", ...args] = argv;
    const child = spawn(program, args, { stdio: ["pipe", "ignore", "ignore"] });
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`timed out after ${timeoutMs} ms`));
    }, timeoutMs);
    child.on("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new Error(signal === null ? `exit code ${code ?? "?"}` : `killed by ${signal}`));
    });
    child.stdin.on("error", () => undefined);
    child.stdin.end(`${input}\n`);
  });
}

/**
 * The configured witnesses, or undefined when none is. The file is checked now (ConfigError when
 * it is inside the data dir or others may write it), created 0600 at the first checkpoint, opened
 * O_APPEND and fsync'd after each line; the command runs once per checkpoint with its line on stdin.
 */
export function createAuditWitness(options: AuditWitnessOptions): AuditWitness | undefined {
  const { file, command } = options;
  if (file === "" && command.length === 0) return undefined;
  if (file !== "") checkWitnessFile(file, options.dataDir);
  let failed = 0;
  const onFailure = (message: string) => {
    failed += 1;
    options.onError(message);
  };
  let handle: Promise<FileHandle> | undefined;
  const append = async (line: string) => {
    handle ??= open(
      file,
      constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW,
      0o600,
    );
    const fh = await handle.catch((err: unknown) => {
      handle = undefined;
      throw err;
    });
    await fh.write(`${line}\n`);
    await fh.sync();
  };
  const toFile = file === "" ? undefined : retrying(`file ${file}`, append, onFailure);
  const timeout = options.commandTimeoutMs ?? WITNESS_COMMAND_TIMEOUT_MS;
  const toCommand =
    command.length === 0
      ? undefined
      : retrying(
          `command ${command[0] ?? ""}`,
          (line) => runCommand(command, line, timeout),
          onFailure,
        );
  return {
    async witness(checkpoint) {
      const line = witnessCheckpointLine(checkpoint);
      await Promise.all([toFile?.(line), toCommand?.(line)]);
    },
    async archived(archive) {
      const line = witnessArchiveLine(archive);
      if (file !== "") await append(line);
      if (command.length > 0) await runCommand(command, line, timeout);
    },
    failures: () => failed,
    async close() {
      const fh = await handle?.catch(() => undefined);
      handle = undefined;
      await fh?.close();
    },
  };
}
