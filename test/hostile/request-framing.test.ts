import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { Server, ServerCredentials, status } from "@grpc/grpc-js";
import type { Http2Server } from "node:http2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Decision } from "../../src/gen/charter/v1/common_pb.js";
import {
  AuthorizeRequestSchema,
  AuthorizeResponseSchema,
} from "../../src/gen/charter/v1/authority_pb.js";
import { WatchApprovalsRequestSchema } from "../../src/gen/charter/v1/approval_pb.js";
import {
  BAD_TIMEOUT_DETAIL,
  ONE_MESSAGE_DETAIL,
  guardedConnectionInjector,
  isValidGrpcTimeout,
} from "../../src/server/request-framing.js";
import { startTestCharter, type TestCharter } from "../support/charter-server.js";
import { framedCall, rawClient } from "../support/raw-grpc.js";

// Issue 22 finding 13: grpc-js answered UNIMPLEMENTED for a unary call with no request message or
// a second one, and INTERNAL (or nothing at all: its pattern is unanchored) for a malformed
// grpc-timeout. Against the real server, framed by hand over HTTP/2.
let charter: TestCharter;
let token: string;
beforeAll(async () => {
  charter = await startTestCharter();
  ({ grantToken: token } = await charter.clients.grants.issueGrant({
    profile: "owner-assistant",
    subject: "agent:framing",
    owner: "ana@example.com",
    purpose: "framing",
  }));
});
afterAll(() => charter.stop());

const address = () => `127.0.0.1:${charter.server.port}`;
const AUTHORIZE = "/charter.v1.AuthorityService/Authorize";
const WATCH = "/charter.v1.ApprovalService/WatchApprovals";
const authorizeBody = (callId: string) =>
  toBinary(
    AuthorizeRequestSchema,
    create(AuthorizeRequestSchema, {
      grantToken: token,
      call: { callId, toolName: "web_search", argumentsJson: '{"query":"charter"}' },
    }),
  );
const auditSeq = async () => (await charter.server.context.store.auditHead())?.seq ?? 0;

describe("request framing", () => {
  it("answers a well-framed Authorize as before, with and without a valid grpc-timeout", async () => {
    for (const headers of [{}, { "grpc-timeout": "10S" }, { "grpc-timeout": "99999999m" }]) {
      const out = await framedCall(address(), AUTHORIZE, [authorizeBody("ok")], headers);
      expect(out).toMatchObject({ code: status.OK, messages: 1 });
    }
  });

  it.each([
    ["no request message", [] as string[]],
    ["two request messages", ["one", "two"]],
    ["three request messages", ["one", "two", "three"]],
  ])(
    "refuses a unary call with %s INVALID_ARGUMENT, and decides nothing",
    async (_name, callIds) => {
      const before = await auditSeq();
      const out = await framedCall(address(), AUTHORIZE, callIds.map(authorizeBody));
      expect(out).toEqual({
        code: status.INVALID_ARGUMENT,
        details: ONE_MESSAGE_DETAIL,
        messages: 0,
      });
      expect(await auditSeq()).toBe(before);
    },
  );

  it("refuses a server-streaming call with no or two request messages INVALID_ARGUMENT", async () => {
    const body = toBinary(WatchApprovalsRequestSchema, create(WatchApprovalsRequestSchema, {}));
    for (const messages of [[], [body, body]]) {
      const out = await framedCall(address(), WATCH, messages);
      expect(out).toMatchObject({ code: status.INVALID_ARGUMENT, details: ONE_MESSAGE_DETAIL });
    }
  });

  it.each(["1", "abcS", "99999999999H", "-1m", "1.5S", "10 S", "S", "", "123456789S"])(
    "refuses grpc-timeout %j INVALID_ARGUMENT, and decides nothing",
    async (timeout) => {
      const before = await auditSeq();
      const out = await framedCall(address(), AUTHORIZE, [authorizeBody("t")], {
        "grpc-timeout": timeout,
      });
      expect(out).toEqual({
        code: status.INVALID_ARGUMENT,
        details: BAD_TIMEOUT_DETAIL,
        messages: 0,
      });
      expect(await auditSeq()).toBe(before);
    },
  );

  it("still decides (and spends) after the refused calls: a valid call is one decision", async () => {
    const before = await auditSeq();
    const client = rawClient(address());
    try {
      const out = await client.call(AUTHORIZE, authorizeBody("after"), 5_000);
      expect(out.ok).toBe(true);
      if (out.ok)
        expect(fromBinary(AuthorizeResponseSchema, out.bytes).verdict?.decision).toBe(
          Decision.ALLOW,
        );
    } finally {
      client.close();
    }
    expect(await auditSeq()).toBe(before + 1);
  });

  it("reads grpc-timeout as the gRPC HTTP/2 spec writes it: 1 to 8 digits and one unit", () => {
    for (const ok of [undefined, "1H", "0S", "99999999n", "5u", "30M", "250m"])
      expect(isValidGrpcTimeout(ok)).toBe(true);
    for (const bad of ["1", "1h", " 1S", "1S ", "+1S", "1e3m", ["1S", "2S"]])
      expect(isValidGrpcTimeout(bad)).toBe(false);
  });

  it("pins the grpc-js internals the grpc-timeout check relies on (Server.http2Servers, one 'stream' listener)", () => {
    // If a grpc-js upgrade changes these, guardedConnectionInjector throws at start: this test says why.
    const server = new Server();
    const servers = (server as unknown as { http2Servers: Map<unknown, unknown> }).http2Servers;
    expect(servers).toBeInstanceOf(Map);
    const injector = guardedConnectionInjector(server, ServerCredentials.createInsecure());
    expect(servers.size).toBe(1);
    const [http2] = [...servers.keys()] as Http2Server[];
    expect(http2?.listeners("stream")).toHaveLength(1);
    injector.destroy();
  });
});
