import { execFile } from "node:child_process";
import { basename, dirname } from "node:path";
import { LoadError } from "../core/errors.js";
import { readText } from "./documents.js";

/** The prefix naming a file at a git ref: `git:REF:path`, the path relative to the working directory. */
export const GIT_PREFIX = "git:";

/**
 * The text of a catalog or policy version: a file path, or `git:REF:path` for the file as it is
 * at a git ref (`git show REF:./file` run in the file's directory, so a relative path means what
 * it means to a file read, in whichever repository holds it). A file or ref that
 * cannot be read is a LoadError naming it.
 */
export async function readVersionText(spec: string): Promise<string> {
  if (!spec.startsWith(GIT_PREFIX)) return readText(spec);
  const rest = spec.slice(GIT_PREFIX.length);
  const colon = rest.indexOf(":");
  const ref = colon < 0 ? "" : rest.slice(0, colon);
  const path = colon < 0 ? "" : rest.slice(colon + 1);
  if (ref === "" || path === "" || ref.startsWith("-"))
    throw new LoadError([{ file: spec, message: "a git version is git:REF:path" }]);
  return new Promise((resolve, reject) => {
    execFile(
      "git",
      ["-C", dirname(path), "show", `${ref}:./${basename(path)}`],
      { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (err === null) resolve(stdout);
        else {
          const why = stderr.trim().split("\n")[0] ?? "";
          reject(
            new LoadError([
              { file: spec, message: `cannot read: git show failed: ${why || err.message}` },
            ]),
          );
        }
      },
    );
  });
}
