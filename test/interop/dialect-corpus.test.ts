import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CallToolResultSchema, JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAppContext, type AppContext } from "../../src/app/context.js";
import {
  authorizeTurn,
  isAuthorityError,
  issueGrant,
  type TurnAnswer,
} from "../../src/authority/index.js";
import { DEFAULTS } from "../../src/config/config.js";
import { isJsonObject } from "../../src/core/json.js";
import { DIALECTS, DIALECT_NAMES } from "../../src/interop/dialects/index.js";
import {
  readCorpus,
  turnDocument,
  type CorpusCase,
  type CorpusVerdict,
} from "../support/dialect-corpus.js";
import { FIXTURES } from "../support/charter-server.js";

// The dialect conformance corpus: each case is a turn in a framework's documented wire shape and
// what Charter must make of it. Run with CHARTER_WRITE_CORPUS=1 to (re)write the expectations of
// the non-error cases from what the code answers — then review the diff like any golden change.

const WRITE = process.env["CHARTER_WRITE_CORPUS"] === "1";
const corpus = readCorpus();
const NOW = 1_750_000_000;

let ctx: AppContext;
let dataDir: string;
const tokens = new Map<string, string>();

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "charter-corpus-"));
  ctx = await createAppContext(
    {
      ...DEFAULTS,
      dataDir,
      catalog: join(FIXTURES, "catalog.yaml"),
      policy: join(FIXTURES, "policy.yaml"),
    },
    { now: () => NOW },
  );
});

afterAll(async () => {
  await ctx.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function tokenFor(profile: string): Promise<string> {
  const known = tokens.get(profile);
  if (known) return known;
  const { token } = await issueGrant(ctx, {
    profile,
    subject: "agent-1",
    owner: "ana",
    purpose: "corpus",
  });
  tokens.set(profile, token);
  return token;
}

function pinned(answer: TurnAnswer): {
  calls: unknown[];
  verdicts: CorpusVerdict[];
  feedback: unknown[];
} {
  return {
    calls: answer.calls.map((a) => a.call),
    verdicts: answer.calls.map(({ decided: { verdict: v } }) => ({
      callId: v.callId,
      decision: v.decision,
      ...(v.reason ? { reason: v.reason.code } : {}),
      ...(v.requirement === undefined ? {} : { requirement: v.requirement }),
    })),
    // Approval ids are fresh per run (and per implementation): the corpus pins where one is named, as APPROVAL_ID.
    feedback: JSON.parse(
      JSON.stringify(answer.messages).replace(/apr_[0-9a-f-]{36}/g, APPROVAL_ID),
    ) as unknown[],
  };
}

/** What stands for an approval id in the corpus's feedback. */
const APPROVAL_ID = "APPROVAL_ID";

describe("the dialect corpus", () => {
  it("holds at least 8 cases, malformed ones among them, for every framework dialect", () => {
    for (const name of DIALECT_NAMES.filter((d) => d !== "neutral")) {
      const cases = corpus.filter((c) => c.dialect === name);
      expect(cases.length, name).toBeGreaterThanOrEqual(8);
      expect(cases.filter((c) => "error" in c.expect).length, name).toBeGreaterThanOrEqual(2);
    }
  });
});

describe.each(DIALECT_NAMES)("%s corpus", (dialect) => {
  const cases = corpus.filter((c) => c.dialect === dialect);
  it.each(cases.map((c) => [c.name, c] as const))("%s", async (_name, c: CorpusCase) => {
    const parsed = DIALECTS[c.dialect].parseCalls(turnDocument(c.payload));
    if ("error" in c.expect) {
      expect(parsed.ok).toBe(false);
      if (!parsed.ok) expect(parsed.error).toContain(`${c.dialect} turn: `);
      if (!parsed.ok) expect(parsed.error).toContain(c.expect.error);
      // Through the application layer too: a malformed turn is a refused request, never a verdict.
      const err = await authorizeTurn(ctx, {
        grantToken: await tokenFor(c.profile),
        dialect: c.dialect,
        turnJson: JSON.stringify(c.payload),
      }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(
        isAuthorityError(err) && err.code === "INVALID_REQUEST" && err.field === "turn_json",
      ).toBe(true);
      return;
    }
    const answer = await authorizeTurn(ctx, {
      grantToken: await tokenFor(c.profile),
      dialect: c.dialect,
      turnJson: JSON.stringify(c.payload),
    });
    const actual = pinned(answer);
    if (WRITE) {
      const { file, ...doc } = c;
      writeFileSync(file, `${JSON.stringify({ ...doc, expect: actual }, null, 2)}\n`);
      return;
    }
    expect(actual).toEqual(c.expect);
    if (c.dialect === "mcp") {
      for (const message of answer.messages) {
        expect(() => JSONRPCMessageSchema.parse(message)).not.toThrow();
        if (isJsonObject(message) && message["result"] !== undefined)
          expect(CallToolResultSchema.parse(message["result"]).isError).toBe(true);
      }
    }
  });
});
