import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import {
  Client,
  credentials,
  loadPackageDefinition,
  Metadata,
  type ServiceClientConstructor,
} from "@grpc/grpc-js";
import { loadSync } from "@grpc/proto-loader";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPromiseClient } from "../../src/client/index.js";
import {
  Health,
  HealthCheckResponse_ServingStatus as ServingStatus,
} from "../../src/gen/grpc/health/v1/health_pb.js";
import { startTestCharter, type TestCharter } from "../support/charter-server.js";

const require = createRequire(import.meta.url);
const reflectionProtoDir = join(
  dirname(require.resolve("@grpc/reflection")),
  "..",
  "proto",
  "grpc",
  "reflection",
);
const status = { INVALID_ARGUMENT: 3, UNIMPLEMENTED: 12, RESOURCE_EXHAUSTED: 8 };

let charter: TestCharter;
let address: string;
beforeAll(async () => {
  charter = await startTestCharter({ config: { maxMessageBytes: 64 * 1024 } });
  address = `127.0.0.1:${charter.server.port}`;
});
afterAll(async () => {
  await charter.stop();
});

function loadClient(file: string, path: string[]): ServiceClientConstructor {
  const pkg = loadPackageDefinition(
    loadSync(file, { keepCase: true, defaults: true, enums: String }),
  );
  return path.reduce<unknown>(
    (o, k) => (o as Record<string, unknown>)[k],
    pkg,
  ) as ServiceClientConstructor;
}

/** Sends raw bytes to a method, bypassing any serializer. */
function rawUnary(path: string, body: Buffer): Promise<unknown> {
  const client = new Client(address, credentials.createInsecure());
  return new Promise((resolve, reject) => {
    client.makeUnaryRequest(
      path,
      (b: Buffer) => b,
      (b: Buffer) => b,
      body,
      new Metadata(),
      {},
      (err, value) => {
        client.close();
        if (err) reject(err);
        else resolve(value);
      },
    );
  });
}

describe("standard services", () => {
  it("answers grpc.health.v1 Check for the server and for each Charter service", async () => {
    const client = createPromiseClient(Health, { address });
    await expect(client.check({ service: "" })).resolves.toMatchObject({
      status: ServingStatus.SERVING,
    });
    await expect(client.check({ service: "charter.v1.AuthorityService" })).resolves.toMatchObject({
      status: ServingStatus.SERVING,
    });
    await expect(client.check({ service: "no.such.Service" })).rejects.toMatchObject({ code: 5 });
    client.close();
  });

  it.each(["v1", "v1alpha"])(
    "answers server reflection %s: lists the services and serves their files",
    async (version) => {
      const Reflection = loadClient(join(reflectionProtoDir, version, "reflection.proto"), [
        "grpc",
        "reflection",
        version,
        "ServerReflection",
      ]);
      const client = new Reflection(address, credentials.createInsecure());
      const stream = (
        client as unknown as {
          ServerReflectionInfo: () => NodeJS.ReadWriteStream & {
            write(m: object): void;
            end(): void;
          };
        }
      ).ServerReflectionInfo();
      const responses: Record<string, unknown>[] = [];
      const done = new Promise<void>((resolve, reject) => {
        stream.on("data", (m: Record<string, unknown>) => responses.push(m));
        stream.on("end", () => resolve());
        stream.on("error", reject);
      });
      stream.write({ list_services: "" });
      stream.write({ file_containing_symbol: "charter.v1.AuthorityService" });
      stream.write({ file_containing_symbol: "grpc.health.v1.Health" });
      stream.write({ file_containing_symbol: `grpc.reflection.${version}.ServerReflection` });
      stream.end();
      await done;
      client.close();
      const services = (
        responses[0]?.["list_services_response"] as { service: { name: string }[] }
      ).service.map((s) => s.name);
      expect(services).toEqual(
        expect.arrayContaining([
          "charter.v1.CatalogService",
          "charter.v1.AuthorityService",
          "charter.v1.GrantService",
          "charter.v1.ApprovalService",
          "charter.v1.KeyService",
          "grpc.health.v1.Health",
          "grpc.reflection.v1.ServerReflection",
          "grpc.reflection.v1alpha.ServerReflection",
        ]),
      );
      const files = (
        responses[1]?.["file_descriptor_response"] as { file_descriptor_proto: Buffer[] }
      ).file_descriptor_proto;
      expect(files.length).toBeGreaterThanOrEqual(2);
      expect(Buffer.concat(files).toString("latin1")).toContain("charter/v1/authority.proto");
      const fileOf = (i: number) =>
        Buffer.concat(
          (responses[i]?.["file_descriptor_response"] as { file_descriptor_proto: Buffer[] })
            .file_descriptor_proto,
        ).toString("latin1");
      expect(fileOf(2)).toContain("grpc/health/v1/health.proto");
      expect(fileOf(3)).toContain(`grpc/reflection/${version}/reflection.proto`);
    },
  );
});

describe("bad requests", () => {
  it("answers INVALID_ARGUMENT for bytes that are not a protobuf message", async () => {
    await expect(
      rawUnary(
        "/charter.v1.AuthorityService/Authorize",
        Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]),
      ),
    ).rejects.toMatchObject({
      code: status.INVALID_ARGUMENT,
      details: "malformed charter.v1.AuthorizeRequest message",
    });
  });

  it("answers RESOURCE_EXHAUSTED for a message over the configured size", async () => {
    const { grantToken } = await charter.clients.grants.issueGrant({
      profile: "owner-assistant",
      subject: "a",
      owner: "o",
      purpose: "p",
    });
    const huge = JSON.stringify({ query: "x".repeat(128 * 1024) });
    await expect(
      charter.clients.authority.authorize({
        grantToken,
        call: { callId: "c", toolName: "web_search", argumentsJson: huge },
      }),
    ).rejects.toMatchObject({
      code: status.RESOURCE_EXHAUSTED,
    });
  });

  it.each([
    [
      "GetCatalog without grant_token",
      () => charter.clients.catalog.getCatalog({}),
      "grant_token: is required",
    ],
    [
      "Authorize without call",
      () => charter.clients.authority.authorize({ grantToken: "t" }),
      "call: is required",
    ],
    [
      "Authorize without call_id",
      () => charter.clients.authority.authorize({ grantToken: "t", call: { toolName: "x" } }),
      "call.call_id: is required",
    ],
    [
      "Authorize without tool_name or action_id",
      () => charter.clients.authority.authorize({ grantToken: "t", call: { callId: "c" } }),
      "call.tool_name: tool_name or action_id is required",
    ],
    [
      "BatchAuthorize without items",
      () => charter.clients.authority.batchAuthorize({ grantToken: "t" }),
      "items: at least one call is required",
    ],
    [
      "BatchAuthorize with an item missing its call_id",
      () =>
        charter.clients.authority.batchAuthorize({
          grantToken: "t",
          items: [{ call: { callId: "a", toolName: "x" } }, { call: { toolName: "x" } }],
        }),
      "items[1].call.call_id: is required",
    ],
    [
      "IssueGrant without profile",
      () => charter.clients.grants.issueGrant({ subject: "s", owner: "o" }),
      "profile: is required",
    ],
    [
      "IssueGrant without subject",
      () => charter.clients.grants.issueGrant({ profile: "receptionist", owner: "o" }),
      "subject: is required",
    ],
    [
      "IssueGrant without owner",
      () => charter.clients.grants.issueGrant({ profile: "receptionist", subject: "s" }),
      "owner: is required",
    ],
    [
      "IssueGrant with an unknown profile",
      () => charter.clients.grants.issueGrant({ profile: "nope", subject: "s", owner: "o" }),
      'profile: no profile named "nope"',
    ],
    [
      "IssueGrant with a zero ttl",
      () =>
        charter.clients.grants.issueGrant({
          profile: "receptionist",
          subject: "s",
          owner: "o",
          ttlSeconds: 0n,
        }),
      "ttl_seconds: must be between 1 and 31622400",
    ],
    [
      "IssueGrant requesting an unknown action",
      () =>
        charter.clients.grants.issueGrant({
          profile: "receptionist",
          subject: "s",
          owner: "o",
          requestedActions: ["no.such"],
        }),
      'requested_actions: unknown action "no.such"',
    ],
    [
      "GetGrant without grant_id",
      () => charter.clients.grants.getGrant({}),
      "grant_id: is required",
    ],
  ])("%s is INVALID_ARGUMENT naming the field", async (_name, call, details) => {
    await expect(call()).rejects.toMatchObject({ code: status.INVALID_ARGUMENT, details });
  });

  it("answers NOT_FOUND for an unknown grant id", async () => {
    await expect(charter.clients.grants.getGrant({ grantId: "grt_missing" })).rejects.toMatchObject(
      { code: 5, details: 'no grant with id "grt_missing"' },
    );
  });

  it("answers FAILED_PRECONDITION when the profile's source is suspended", async () => {
    await expect(
      charter.clients.grants.issueGrant({
        profile: "legacy-integration",
        subject: "s",
        owner: "o",
      }),
    ).rejects.toMatchObject({
      code: 9,
      details: expect.stringMatching(/^SOURCE_SUSPENDED: /) as unknown,
    });
  });
});

describe("RPCs built by later issues", () => {
  it.each([
    ["DelegateGrant", () => charter.clients.grants.delegateGrant({}), "parent_token: is required"],
    ["RevokeGrant", () => charter.clients.grants.revokeGrant({}), "grant_id: is required"],
    [
      "DecideApproval",
      () => charter.clients.approvals.decideApproval({}),
      "outcome: must be APPROVAL_OUTCOME_APPROVE or APPROVAL_OUTCOME_REJECT",
    ],
  ])("%s, built now, names its missing required field", async (_name, call, details) => {
    await expect(call()).rejects.toMatchObject({ code: status.INVALID_ARGUMENT, details });
  });

  it("a server stream that refuses its request ends with that status (WatchApprovals with a negative sequence)", async () => {
    const consume = async () => {
      for await (const _event of charter.clients.approvals.watchApprovals({
        owner: "o",
        afterSequence: -1n,
      }))
        break;
    };
    await expect(consume()).rejects.toMatchObject({
      code: status.INVALID_ARGUMENT,
      details: "after_sequence: must be a non-negative integer",
    });
  });
});
