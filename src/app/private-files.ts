import {
  accessSync,
  constants,
  mkdirSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { ConfigError } from "../config/config.js";

/** Bits that let the group or other users in: a data dir or key file must have none. */
const SHARED = 0o077;

const mode = (m: number) => `0${(m & 0o777).toString(8)}`;

/**
 * The data dir Charter keeps its store and signing keys in, made safe to use: created 0700 when
 * missing; refused (ConfigError, exit 78) when other users can get in, when a store file in it
 * is readable by them, or when it cannot be written. Each message names the path and the fix.
 */
export function preparePrivateDataDir(dataDir: string): void {
  let stat;
  try {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    stat = statSync(dataDir);
  } catch (err) {
    throw new ConfigError(
      `data dir ${dataDir} cannot be created (${codeOf(err)}); create it as a directory only Charter's user can use: mkdir -m 700 ${dataDir}`,
    );
  }
  if (!stat.isDirectory()) throw new ConfigError(`data dir ${dataDir} is not a directory`);
  if ((stat.mode & SHARED) !== 0) {
    throw new ConfigError(
      `data dir ${dataDir} is open to other users (mode ${mode(stat.mode)}); it holds the signing keys: chmod 700 ${dataDir}`,
    );
  }
  for (const name of readdirSync(dataDir)) {
    if (!name.startsWith("charter.db")) continue;
    const file = join(dataDir, name);
    const m = statSync(file).mode;
    if ((m & SHARED) !== 0)
      throw new ConfigError(
        `store file ${file} is readable by other users (mode ${mode(m)}); it holds the signing keys: chmod 600 ${file}`,
      );
  }
  // access() says yes to root whatever the mode; a probe file tells the truth.
  const probe = join(dataDir, `.write-probe-${process.pid}`);
  try {
    accessSync(dataDir, constants.W_OK);
    writeFileSync(probe, "", { mode: 0o600 });
    rmSync(probe);
  } catch (err) {
    throw new ConfigError(
      `data dir ${dataDir} cannot be written (${codeOf(err)}); Charter records every grant and decision there: give its user write access`,
    );
  }
}

/** Refuses a secret file (a TLS private key, the key-encryption key) that other users can read. */
export function checkPrivateFile(file: string, what: string): void {
  let m: number;
  try {
    m = statSync(file).mode;
  } catch (err) {
    throw new ConfigError(`${what} ${file} cannot be read (${codeOf(err)})`);
  }
  if ((m & SHARED) !== 0)
    throw new ConfigError(
      `${what} ${file} is readable by other users (mode ${mode(m)}): chmod 600 ${file}`,
    );
}

function codeOf(err: unknown): string {
  return (err as NodeJS.ErrnoException).code ?? String(err);
}
