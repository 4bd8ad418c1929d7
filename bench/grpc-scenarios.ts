/**
 * The requests `npm run bench:grpc` sends, built once with the generated descriptors, and what a
 * correct answer to each is (checked on sampled requests through a grpc-js client).
 */
import {
  create,
  fromBinary,
  toBinary,
  type DescMessage,
  type MessageInitShape,
} from "@bufbuild/protobuf";
import { createCharterClients } from "../src/client/index.js";
import {
  AuthorizeRequestSchema,
  AuthorizeResponseSchema,
  BatchAuthorizeRequestSchema,
  BatchAuthorizeResponseSchema,
} from "../src/gen/charter/v1/authority_pb.js";
import {
  GetCatalogRequestSchema,
  GetCatalogResponseSchema,
} from "../src/gen/charter/v1/catalog_pb.js";
import { Decision, Dialect, type Verdict } from "../src/gen/charter/v1/common_pb.js";
import { GetJwksRequestSchema, GetJwksResponseSchema } from "../src/gen/charter/v1/key_pb.js";
import { generatedToolName } from "./grpc-catalog.js";
import { grpcFrame } from "./grpc-h2load.js";

/** One request h2load repeats, and the check of its answer (a problem, or undefined when right). */
export interface Scenario {
  readonly name: string;
  readonly path: string;
  readonly message: Uint8Array;
  readonly frame: Buffer;
  readonly expect: (response: Uint8Array) => string | undefined;
  /**
   * What the floor server does for this request (bench/grpc-floor.ts): the records it writes and
   * the receipts it signs, and the length of each receipt's signing input read off an answer.
   */
  readonly floor?: {
    readonly rows: number;
    readonly signs: number;
    readonly signedBytes: (response: Uint8Array) => number;
  };
}

/** The length of a compact JWS's signing input (header.payload): what Ed25519 signs. */
const signingInput = (receipt: string | undefined) => Math.max(0, (receipt ?? "").lastIndexOf("."));

/** The calls each catalog is driven with: one allowed, one denied, one held for approval. */
const CALLS = {
  demo: {
    profile: "owner-assistant",
    allow: { toolName: "web_search", argumentsJson: '{"query":"weather in Lisbon"}' },
    deny: { toolName: "run_shell", argumentsJson: '{"command":"ls"}' },
    approval: {
      toolName: "delete_email",
      argumentsJson: '{"message_id":"msg_abcdefgh12","reason":"spam"}',
    },
  },
  generated: {
    profile: "generated",
    allow: {
      toolName: generatedToolName(1),
      argumentsJson: '{"query":"weather in Lisbon","limit":5}',
    },
    deny: { toolName: generatedToolName(999), argumentsJson: '{"query":"x"}' },
    approval: { toolName: generatedToolName(500), argumentsJson: '{"query":"x"}' },
  },
} as const;

/** Issues a grant on the server and builds every scenario's request under it. */
export async function scenarios(address: string, catalog: keyof typeof CALLS): Promise<Scenario[]> {
  const calls = CALLS[catalog];
  const clients = createCharterClients({ address });
  const { grantToken } = await clients.grants.issueGrant({
    profile: calls.profile,
    subject: "agent:bench",
    owner: "ana@example.com",
    purpose: "bench:grpc",
  });
  clients.close();
  const verdictIs = (decision: Decision) => (v: Verdict | undefined) =>
    v?.decision === decision
      ? undefined
      : `expected ${Decision[decision]}, got ${v ? Decision[v.decision] : "no verdict"} ${v?.reason?.code ?? ""}`;
  const authorize = (
    name: string,
    call: { toolName: string; argumentsJson: string },
    decision: Decision,
  ) => ({
    ...scenario(
      name,
      "/charter.v1.AuthorityService/Authorize",
      AuthorizeRequestSchema,
      { grantToken, call: { callId: `bench-${name}`, ...call } },
      (bytes) => verdictIs(decision)(fromBinary(AuthorizeResponseSchema, bytes).verdict),
    ),
    floor: {
      rows: 1,
      signs: decision === Decision.ALLOW ? 1 : 0,
      signedBytes: (bytes: Uint8Array) =>
        signingInput(fromBinary(AuthorizeResponseSchema, bytes).verdict?.receipt),
    },
  });
  const items = Array.from({ length: 16 }, (_, i) => ({
    call: { callId: `bench-batch-${i}`, ...calls.allow },
  }));
  return [
    authorize("authorize-allow", calls.allow, Decision.ALLOW),
    authorize("authorize-deny", calls.deny, Decision.DENY),
    authorize("authorize-approval", calls.approval, Decision.REQUIRE_APPROVAL),
    {
      ...scenario(
        "batch-authorize-16",
        "/charter.v1.AuthorityService/BatchAuthorize",
        BatchAuthorizeRequestSchema,
        { grantToken, items },
        (bytes) => {
          const { verdicts } = fromBinary(BatchAuthorizeResponseSchema, bytes);
          return verdicts.length !== 16
            ? `expected 16 verdicts, got ${verdicts.length}`
            : verdicts.map(verdictIs(Decision.ALLOW)).find((p) => p !== undefined);
        },
      ),
      floor: {
        rows: 16,
        signs: 16,
        signedBytes: (bytes: Uint8Array) =>
          signingInput(fromBinary(BatchAuthorizeResponseSchema, bytes).verdicts[0]?.receipt),
      },
    },
    scenario(
      "get-catalog",
      "/charter.v1.CatalogService/GetCatalog",
      GetCatalogRequestSchema,
      { grantToken, dialect: Dialect.OPENAI_CHAT },
      (bytes) =>
        (fromBinary(GetCatalogResponseSchema, bytes).view?.tools.length ?? 0) > 0
          ? undefined
          : "an empty catalog",
    ),
    scenario("get-jwks", "/charter.v1.KeyService/GetJwks", GetJwksRequestSchema, {}, (bytes) =>
      fromBinary(GetJwksResponseSchema, bytes).keys.length > 0 ? undefined : "no keys",
    ),
  ];
}

function scenario<D extends DescMessage>(
  name: string,
  path: string,
  schema: D,
  init: MessageInitShape<D>,
  expect: Scenario["expect"],
): Scenario {
  const message = toBinary(schema, create(schema, init));
  return { name, path, message, frame: grpcFrame(message), expect };
}
