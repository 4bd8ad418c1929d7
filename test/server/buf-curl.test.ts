import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestCharter, type TestCharter } from "../support/charter-server.js";

// A stock reflection client (buf curl, shipped in @bufbuild/buf) with no local proto: everything it
// knows about the services it learns through server reflection.
const run = promisify(execFile);
const ROOT = new URL("../../", import.meta.url).pathname;

let charter: TestCharter;
let base: string;
beforeAll(async () => {
  charter = await startTestCharter();
  base = `http://127.0.0.1:${charter.server.port}`;
});
afterAll(async () => {
  await charter.stop();
});

const bufCurl = async (...args: string[]) =>
  (
    await run("npx", ["buf", "curl", "--protocol", "grpc", "--http2-prior-knowledge", ...args], {
      cwd: ROOT,
      timeout: 30_000,
    })
  ).stdout;

describe("buf curl through server reflection alone", () => {
  it("calls grpc.health.v1.Health/Check and gets SERVING", async () => {
    const out = await bufCurl(`${base}/grpc.health.v1.Health/Check`);
    expect(JSON.parse(out)).toEqual({ status: "SERVING" });
  });

  it("checks one Charter service by name", async () => {
    const out = await bufCurl(
      "--data",
      '{"service":"charter.v1.GrantService"}',
      `${base}/grpc.health.v1.Health/Check`,
    );
    expect(JSON.parse(out)).toEqual({ status: "SERVING" });
  });

  it("lists the health and reflection services besides Charter's, and health's methods", async () => {
    const services = (await bufCurl("--list-services", base)).trim().split("\n");
    expect(services).toEqual(
      expect.arrayContaining([
        "charter.v1.AuthorityService",
        "grpc.health.v1.Health",
        "grpc.reflection.v1.ServerReflection",
        "grpc.reflection.v1alpha.ServerReflection",
      ]),
    );
    const methods = (await bufCurl("--list-methods", base)).trim().split("\n");
    expect(methods).toEqual(
      expect.arrayContaining(["grpc.health.v1.Health/Check", "grpc.health.v1.Health/Watch"]),
    );
  });
});
