import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { DescService } from "@bufbuild/protobuf";
import { Client, credentials, Metadata, status, type ServiceError } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COMPOSE_DENIAL_CODES } from "../../src/core/compose.js";
import { REFUSAL_CODES } from "../../src/core/delegate.js";
import { callDigest, canonicalJson } from "../../src/core/digest.js";
import { REASON_CODES } from "../../src/core/verdict.js";
import { ApprovalService } from "../../src/gen/charter/v1/approval_pb.js";
import { AuthorityService } from "../../src/gen/charter/v1/authority_pb.js";
import { CatalogService } from "../../src/gen/charter/v1/catalog_pb.js";
import { DecisionSchema } from "../../src/gen/charter/v1/common_pb.js";
import { GrantService } from "../../src/gen/charter/v1/grant_pb.js";
import { KeyService } from "../../src/gen/charter/v1/key_pb.js";
import { startTestCharter, type TestCharter } from "../support/charter-server.js";
import {
  backtickedCodes,
  codeColumn,
  firstTable,
  paragraphsStartingWith,
  parseMarkdown,
  section,
  setDiff,
  subsections,
  type MarkdownDoc,
  type Section,
} from "./markdown.js";

// The shape of docs/api.md these tests rely on:
// - "## Reason codes", "## Delegation refusal codes", "## Compose denial codes" and "## Decisions"
//   each hold a pipe table whose first column holds one `CODE` in backticks per row;
// - "## RPC reference" holds one "### Service.Rpc" section per rpc of proto/charter/v1, each
//   with one "**Status:** implemented" or "**Status:** UNIMPLEMENTED" line and one
//   "**Reason codes:**" paragraph.

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const PROTO_DIR = join(ROOT, "proto", "charter", "v1");
const api: MarkdownDoc = parseMarkdown(
  "docs/api.md",
  readFileSync(join(ROOT, "docs", "api.md"), "utf8"),
);

const SERVICES: readonly DescService[] = [
  CatalogService,
  AuthorityService,
  GrantService,
  ApprovalService,
  KeyService,
];

/** The codes of the code table under a level-2 heading of docs/api.md. */
function documentedCodes(heading: string, column = "code"): string[] {
  return codeColumn(firstTable(section(api, 2, heading)), column, `docs/api.md "## ${heading}"`);
}

/** `Service.Rpc` for every rpc declared in proto/charter/v1/*.proto, read from the proto text. */
function protoRpcs(): string[] {
  const out: string[] = [];
  for (const file of readdirSync(PROTO_DIR)
    .filter((f) => f.endsWith(".proto"))
    .sort()) {
    const text = readFileSync(join(PROTO_DIR, file), "utf8")
      .replace(/\/\*[\s\S]*?\*\//g, "")
      .replace(/\/\/.*$/gm, "");
    let service: string | undefined;
    for (const m of text.matchAll(/\bservice\s+(\w+)\s*\{|\brpc\s+(\w+)\s*\(/g)) {
      if (m[1] !== undefined) service = m[1];
      else if (service === undefined)
        throw new Error(`${file}: rpc ${String(m[2])} outside a service`);
      else out.push(`${service}.${String(m[2])}`);
    }
  }
  return out;
}

function rpcSections(): Section[] {
  return subsections(api, section(api, 2, "RPC reference"), 3);
}

describe("docs/api.md code tables", () => {
  it("lists every reason code of REASON_CODES, and no other", () => {
    expect(setDiff(documentedCodes("Reason codes"), REASON_CODES)).toEqual({
      missingFromDocs: [],
      unknownToCode: [],
      repeated: [],
    });
  });

  it("lists every delegation refusal code of REFUSAL_CODES, and no other", () => {
    expect(setDiff(documentedCodes("Delegation refusal codes"), REFUSAL_CODES)).toEqual({
      missingFromDocs: [],
      unknownToCode: [],
      repeated: [],
    });
  });

  it("lists every compose denial code of COMPOSE_DENIAL_CODES, and no other", () => {
    expect(setDiff(documentedCodes("Compose denial codes"), COMPOSE_DENIAL_CODES)).toEqual({
      missingFromDocs: [],
      unknownToCode: [],
      repeated: [],
    });
  });

  it("lists every value of the proto's Decision enum, and no other", () => {
    const values = DecisionSchema.values.map((v) => v.name);
    expect(setDiff(documentedCodes("Decisions", "value"), values)).toEqual({
      missingFromDocs: [],
      unknownToCode: [],
      repeated: [],
    });
  });

  it("names only real reason codes in each RPC's **Reason codes:** paragraph", () => {
    const known = new Set<string>(REASON_CODES);
    const unknown = rpcSections().flatMap((s) =>
      paragraphsStartingWith(s, "**Reason codes:**")
        .flatMap(backtickedCodes)
        .filter((c) => !known.has(c))
        .map((c) => `${s.heading.text}: ${c}`),
    );
    expect(unknown).toEqual([]);
  });

  it("shows a call digest example that the code reproduces", () => {
    const example = {
      grantId: "grt_example",
      actionId: "web.search",
      arguments: { query: "charter", max_results: 5 },
    };
    const text = api.lines.join("\n");
    expect(text).toContain(canonicalJson(example));
    expect(text).toContain(callDigest(example.grantId, example.actionId, example.arguments));
  });
});

describe("docs/api.md RPC sections", () => {
  it("reads the same rpcs from the proto text as the generated descriptors hold", () => {
    const generated = SERVICES.flatMap((s) => s.methods.map((m) => `${s.name}.${m.name}`));
    expect(protoRpcs().sort()).toEqual(generated.sort());
  });

  it("has one section per rpc of proto/charter/v1, and none for an rpc the proto lacks", () => {
    const headings = rpcSections().map((s) => s.heading.text);
    const malformed = headings.filter((h) => !/^\w+\.\w+$/.test(h));
    expect(malformed, 'every "###" heading under "## RPC reference" is "Service.Rpc"').toEqual([]);
    expect(setDiff(headings, protoRpcs())).toEqual({
      missingFromDocs: [],
      unknownToCode: [],
      repeated: [],
    });
  });

  it("gives each RPC section one **Status:** line and one **Reason codes:** paragraph", () => {
    const problems = rpcSections().flatMap((s) => {
      const statuses = s.body.filter((l) =>
        /^\*\*Status:\*\* (implemented|UNIMPLEMENTED)\b/.test(l),
      );
      const reasons = paragraphsStartingWith(s, "**Reason codes:**");
      return [
        ...(statuses.length === 1 ? [] : [`${s.heading.text}: ${statuses.length} status lines`]),
        ...(reasons.length === 1
          ? []
          : [`${s.heading.text}: ${reasons.length} reason-code paragraphs`]),
      ];
    });
    expect(problems).toEqual([]);
  });

  describe("against a running server", () => {
    let charter: TestCharter;
    beforeAll(async () => {
      charter = await startTestCharter();
    });
    afterAll(async () => {
      await charter.stop();
    });

    it("says UNIMPLEMENTED exactly for the RPCs that answer UNIMPLEMENTED", async () => {
      const address = `127.0.0.1:${charter.server.port}`;
      const documented: Record<string, boolean> = {};
      for (const s of rpcSections())
        documented[s.heading.text] = s.body.some((l) => l.startsWith("**Status:** UNIMPLEMENTED"));
      const served: Record<string, boolean> = {};
      for (const service of SERVICES) {
        for (const method of service.methods) {
          const err = await callEmpty(
            address,
            `/${service.typeName}/${method.name}`,
            method.methodKind === "server_streaming",
          );
          served[`${service.name}.${method.name}`] =
            err?.code === status.UNIMPLEMENTED &&
            err.details === `${method.name} is not implemented yet`;
        }
      }
      expect(documented).toEqual(served);
    });
  });
});

/** Calls a method with an empty request; answers the error status, or undefined on success or a deadline. */
function callEmpty(
  address: string,
  path: string,
  streaming: boolean,
): Promise<ServiceError | undefined> {
  const client = new Client(address, credentials.createInsecure());
  const identity = (b: Buffer) => b;
  const options = { deadline: Date.now() + 2_000 };
  return new Promise<ServiceError | undefined>((resolve) => {
    const done = (err: ServiceError | null | undefined) =>
      resolve(err && err.code !== status.DEADLINE_EXCEEDED ? err : undefined);
    if (!streaming) {
      client.makeUnaryRequest(
        path,
        identity,
        identity,
        Buffer.alloc(0),
        new Metadata(),
        options,
        (err) => done(err),
      );
      return;
    }
    const stream = client.makeServerStreamRequest(
      path,
      identity,
      identity,
      Buffer.alloc(0),
      new Metadata(),
      options,
    );
    stream.on("data", () => stream.cancel());
    stream.on("error", (err: ServiceError) =>
      done(err.code === status.CANCELLED ? undefined : err),
    );
    stream.on("end", () => done(undefined));
  }).finally(() => client.close());
}
