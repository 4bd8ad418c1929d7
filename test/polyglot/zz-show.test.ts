import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { it } from "vitest";
import { startTestCharter } from "../support/charter-server.js";
const ex = promisify(execFile);
it("show", async () => {
  const c = await startTestCharter();
  const d = mkdtempSync(join(tmpdir(), "show-"));
  let t = Date.now();
  await ex("bash", ["examples/python/generate.sh", d]);
  console.log(`generate.sh: ${Date.now() - t} ms`);
  for (const extra of [[], ["--tamper-receipt"], ["--default"]]) {
    t = Date.now();
    const args = extra[0] === "--default" ? [] : ["--issuer", "charter", "--audience", "charter", ...extra];
    const r = await ex("/usr/bin/python3", ["examples/python/charter_example.py", "--address", `127.0.0.1:${c.server.port}`, "--stubs", d, ...args], { encoding: "utf8" }).then((x) => ({ ...x, code: 0 }), (e: { stdout: string; stderr: string; code: number }) => e);
    console.log(`$ charter_example.py ${extra.join(" ")}\n${r.stdout}${r.stderr}exit ${r.code} in ${Date.now() - t} ms`);
  }
  await c.stop();
});
