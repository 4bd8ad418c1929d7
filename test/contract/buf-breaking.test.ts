import { execFile } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const ROOT = new URL("../../", import.meta.url).pathname;
const BUF = join(ROOT, "node_modules", ".bin", "buf");
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** A copy of the contract with one edit applied to one file. */
function mutated(file: string, edit: (text: string) => string): string {
  const dir = mkdtempSync(join(tmpdir(), "charter-proto-"));
  dirs.push(dir);
  cpSync(join(ROOT, "proto"), join(dir, "proto"), { recursive: true });
  cpSync(join(ROOT, "buf.yaml"), join(dir, "buf.yaml"));
  const path = join(dir, "proto", "charter", "v1", file);
  const before = readFileSync(path, "utf8");
  const after = edit(before);
  expect(after, "the edit must change the file").not.toBe(before);
  writeFileSync(path, after);
  return dir;
}

async function breaking(dir: string): Promise<{ code: number; output: string }> {
  try {
    const r = await run(BUF, ["breaking", dir, "--against", ROOT], { cwd: ROOT });
    return { code: 0, output: r.stdout + r.stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, output: e.stdout + e.stderr };
  }
}

describe("buf breaking (FILE rules) against the committed contract", () => {
  it("accepts the contract unchanged and an added field", async () => {
    const dir = mutated("authority.proto", (t) =>
      t.replace(
        /message AuthorizeResponse \{/,
        "message AuthorizeResponse {\n  // Added for the test.\n  string note = 99;",
      ),
    );
    expect(await breaking(dir)).toMatchObject({ code: 0 });
  });

  it.each([
    [
      "a removed field",
      "common.proto",
      (t: string) => t.replace(/\n\s*string call_digest = 8;/, ""),
      /call_digest|deleted/i,
    ],
    [
      "a renumbered tag",
      "common.proto",
      (t: string) => t.replace("string call_digest = 8;", "string call_digest = 80;"),
      /call_digest|changed|deleted/i,
    ],
    [
      "a renamed RPC",
      "authority.proto",
      (t: string) => t.replace("rpc BatchAuthorize(", "rpc AuthorizeMany("),
      /BatchAuthorize/,
    ],
  ])("fails on %s", async (_name, file, edit, mentions) => {
    const result = await breaking(mutated(file, edit));
    expect(result.code).not.toBe(0);
    expect(result.output).toMatch(mentions);
  });
});
