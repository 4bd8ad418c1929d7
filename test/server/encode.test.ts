import {
  create,
  ScalarType,
  toBinary,
  type DescField,
  type DescMessage,
  type MessageShape,
} from "@bufbuild/protobuf";
import { WireType } from "@bufbuild/protobuf/wire";
import { describe, expect, it } from "vitest";
import { file_charter_v1_approval } from "../../src/gen/charter/v1/approval_pb.js";
import {
  AuthorizeResponseSchema,
  file_charter_v1_authority,
} from "../../src/gen/charter/v1/authority_pb.js";
import {
  file_charter_v1_catalog,
  GetCatalogResponseSchema,
} from "../../src/gen/charter/v1/catalog_pb.js";
import {
  CatalogViewSchema,
  Decision,
  Effect,
  file_charter_v1_common,
  GrantMode,
  ToolEntrySchema,
  ToolStatus,
  type ToolEntry,
} from "../../src/gen/charter/v1/common_pb.js";
import { file_charter_v1_grant } from "../../src/gen/charter/v1/grant_pb.js";
import { GetJwksResponseSchema, file_charter_v1_key } from "../../src/gen/charter/v1/key_pb.js";
import { encodeMessage } from "../../src/server/encode.js";

// The router writes every response with encodeMessage: its bytes must be protobuf-es's own.

const FILES = [
  file_charter_v1_common,
  file_charter_v1_catalog,
  file_charter_v1_authority,
  file_charter_v1_grant,
  file_charter_v1_approval,
  file_charter_v1_key,
];
const MESSAGES: DescMessage[] = FILES.flatMap((f) =>
  f.messages.flatMap(function all(m: DescMessage): DescMessage[] {
    return [m, ...m.nestedMessages.flatMap(all)];
  }),
);

/** A small deterministic generator (xorshift), so a failure is reproducible. */
function random(seed: number) {
  let x = seed || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

const TEXTS = [
  "",
  "a",
  "web_search",
  "\ufeffweb_search",
  "héllo wörld",
  "日本語",
  "emoji 😀",
  "lone \ud800 surrogate",
  "x".repeat(200),
  "y".repeat(20000),
];
const INTS = [0, 1, -1, 127, 128, 300, 16384, 2 ** 31 - 1, -(2 ** 31), -12345];
const UINTS = [0, 1, 127, 128, 2 ** 28, 2 ** 32 - 1];

function scalarValue(type: ScalarType, r: () => number): unknown {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)] as T;
  switch (type) {
    case ScalarType.STRING:
      return pick(TEXTS);
    case ScalarType.BOOL:
      return r() < 0.5;
    case ScalarType.INT32:
    case ScalarType.SINT32:
    case ScalarType.SFIXED32:
      return pick(INTS);
    case ScalarType.UINT32:
    case ScalarType.FIXED32:
      return pick(UINTS);
    case ScalarType.INT64:
    case ScalarType.SINT64:
    case ScalarType.SFIXED64:
      return BigInt(pick(INTS));
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      return BigInt(pick(UINTS));
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      return r() * 100;
    case ScalarType.BYTES:
      return new Uint8Array([1, 2, 3].slice(0, Math.floor(r() * 4)));
  }
}

function fieldValue(field: DescField, r: () => number, depth: number): unknown {
  switch (field.fieldKind) {
    case "scalar":
      return scalarValue(field.scalar, r);
    case "enum":
      return field.enum.values[Math.floor(r() * field.enum.values.length)]?.number ?? 0;
    case "message":
      return depth > 3 ? undefined : randomMessage(field.message, r, depth + 1);
    case "list": {
      const n = Math.floor(r() * 3);
      if (field.listKind === "message")
        return depth > 3
          ? []
          : Array.from({ length: n }, () => randomMessage(field.message, r, depth + 1));
      if (field.listKind === "enum") return Array.from({ length: n }, () => 1);
      return Array.from({ length: n }, () => scalarValue(field.scalar, r));
    }
    case "map":
      return {};
  }
}

function randomMessage(desc: DescMessage, r: () => number, depth = 0): MessageShape<DescMessage> {
  const init: Record<string, unknown> = {};
  for (const field of desc.fields) {
    if (r() < 0.3) continue;
    const value = fieldValue(field, r, depth);
    if (value === undefined) continue;
    if (field.oneof !== undefined) init[field.oneof.localName] = { case: field.localName, value };
    else init[field.localName] = value;
  }
  return create(desc, init);
}

describe("encodeMessage()", () => {
  it.each(MESSAGES.map((m) => [m.typeName, m] as const))(
    "writes %s byte for byte as toBinary does",
    (_name, desc) => {
      const r = random(desc.typeName.length * 7919);
      for (let i = 0; i < 200; i++) {
        const message = randomMessage(desc, r);
        expect(Buffer.from(encodeMessage(desc, message)).toString("hex")).toBe(
          Buffer.from(toBinary(desc, message)).toString("hex"),
        );
      }
    },
  );

  it("writes the hot responses itself, into one buffer (toBinary answers a plain Uint8Array)", () => {
    const message = create(AuthorizeResponseSchema, {
      verdict: { decision: Decision.ALLOW, callId: "c1", reason: { code: "X", message: "m" } },
    });
    expect(Buffer.isBuffer(encodeMessage(AuthorizeResponseSchema, message))).toBe(true);
    expect(
      Buffer.isBuffer(
        encodeMessage(
          GetJwksResponseSchema,
          create(GetJwksResponseSchema, { jwksJson: "{}", keys: [{ kid: "k" }] }),
        ),
      ),
    ).toBe(true);
  });

  it("writes empty messages as no bytes", () => {
    for (const desc of MESSAGES) expect(encodeMessage(desc, create(desc)).length).toBe(0);
  });

  it("keeps a message's unknown fields (as toBinary does)", () => {
    const message = create(AuthorizeResponseSchema, {
      verdict: { decision: Decision.ALLOW, callId: "c1" },
    });
    message.$unknown = [
      { no: 99, wireType: WireType.LengthDelimited, data: new Uint8Array([1, 0x41]) },
    ];
    expect(Buffer.from(encodeMessage(AuthorizeResponseSchema, message))).toEqual(
      Buffer.from(toBinary(AuthorizeResponseSchema, message)),
    );
  });
});

describe("encodeMessage() and frozen messages of scalars (encoded once, then copied)", () => {
  const entry = (name: string) =>
    create(ToolEntrySchema, {
      actionId: `act.${name}`,
      name,
      description: "d ✓",
      inputSchemaJson: '{"type":"object"}',
      status: ToolStatus.CALLABLE,
      effect: Effect.WRITE,
      descriptorDigest: "ab",
    });
  const view = (tools: ToolEntry[]) =>
    create(CatalogViewSchema, {
      grantId: "grt_1",
      catalogVersion: "v1",
      mode: GrantMode.LIVE,
      tools,
    });

  it("writes a frozen entry's kept bytes, the same as toBinary, every time it is part of a response", () => {
    const shared = Object.freeze(entry("shared"));
    for (const others of [[], [entry("a")], [entry("b"), entry("c")]]) {
      const message = view([...others, shared, shared]);
      expect(Buffer.from(encodeMessage(CatalogViewSchema, message))).toEqual(
        Buffer.from(toBinary(CatalogViewSchema, message)),
      );
    }
  });

  it("encodes a message that is not frozen afresh each time: a change made between two responses is sent", () => {
    const changing = entry("before");
    encodeMessage(CatalogViewSchema, view([changing]));
    changing.name = "after";
    changing.descriptorDigest = "cd";
    const message = view([changing]);
    expect(Buffer.from(encodeMessage(CatalogViewSchema, message))).toEqual(
      Buffer.from(toBinary(CatalogViewSchema, message)),
    );
  });

  it("keeps no bytes for a frozen message with lists or nested messages (what they hold can still change)", () => {
    const frozen = Object.freeze(view([entry("first")]));
    const response = create(GetCatalogResponseSchema, { view: frozen, renderedToolsJson: "[]" });
    encodeMessage(GetCatalogResponseSchema, response);
    // Freezing is shallow: the frozen view's list still takes another entry.
    frozen.tools.push(entry("second"));
    expect(response.view?.tools).toHaveLength(2);
    expect(Buffer.from(encodeMessage(GetCatalogResponseSchema, response))).toEqual(
      Buffer.from(toBinary(GetCatalogResponseSchema, response)),
    );
  });
});
