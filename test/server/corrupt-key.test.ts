import { join } from "node:path";
import Database from "better-sqlite3";
import { base64url, generateKeyPair, SignJWT } from "jose";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TaskGrant } from "../../src/core/grant.js";
import { Decision } from "../../src/gen/charter/v1/common_pb.js";
import { startTestCharter, type TestCharter } from "../support/charter-server.js";

const INTERNAL = 13;
const CORRUPT_KID = "corrupt-kid-planted-by-the-test";
const SEARCH = {
  callId: "c-1",
  toolName: "web_search",
  argumentsJson: JSON.stringify({ query: "charter" }),
};

/** The server's clock: frozen, so the test decides when the key ring may read the store again. */
let clock = Math.floor(Date.now() / 1000);
const logLines: string[] = [];
let charter: TestCharter;
let genuine: { token: string; grant: TaskGrant };

beforeAll(async () => {
  const log = pino({ level: "info" }, { write: (line: string) => void logLines.push(line) });
  charter = await startTestCharter({ now: () => clock, log });
  const issued = await charter.clients.grants.issueGrant({
    profile: "owner-assistant",
    subject: "agent:a",
    owner: "ana@example.com",
    purpose: "p",
  });
  const payload = JSON.parse(
    new TextDecoder().decode(base64url.decode(issued.grantToken.split(".")[1] as string)),
  ) as { grant: TaskGrant };
  genuine = { token: issued.grantToken, grant: payload.grant };
});

afterAll(async () => {
  await charter.stop();
});

/** Writes a key row whose public JWK is not JSON, through a second connection, as a damaged disk or a buggy peer would. */
function plantCorruptKey(file: string, createdAt: number): void {
  const db = new Database(file);
  try {
    db.prepare(
      "INSERT INTO keys (kid, alg, public_jwk, private_jwk, created_at, retired_at) VALUES (?, 'EdDSA', ?, ?, ?, NULL)",
    ).run(CORRUPT_KID, "{this is not a JWK", "{}", createdAt);
  } finally {
    db.close();
  }
}

/** A token naming the corrupt key's kid (signed by a stranger: the server never gets as far as the signature). */
async function tokenNaming(kid: string): Promise<string> {
  const { privateKey } = await generateKeyPair("EdDSA", { crv: "Ed25519" });
  const g = genuine.grant;
  return new SignJWT({ grant: g as unknown as Record<string, unknown> })
    .setProtectedHeader({ alg: "EdDSA", kid, typ: "charter-grant+jwt" })
    .setIssuer(charter.config.issuer)
    .setAudience(charter.config.audience)
    .setSubject(g.subject)
    .setJti(g.id)
    .setIssuedAt(g.issuedAt)
    .setNotBefore(g.issuedAt)
    .setExpirationTime(g.expiresAt)
    .sign(privateKey);
}

describe("a corrupt stored key met while verifying a token", () => {
  it("fails Authorize with INTERNAL, logs the fault, and does not blame the caller's token", async () => {
    const before = await charter.clients.authority.authorize({
      grantToken: genuine.token,
      call: SEARCH,
    });
    expect(before.verdict).toMatchObject({ decision: Decision.ALLOW });

    plantCorruptKey(join(charter.dataDir, "charter.db"), clock + 1);
    // Past the ring's reload interval (30 s), an unknown kid makes the ring read the store again.
    clock += 60;
    const token = await tokenNaming(CORRUPT_KID);
    const failed = charter.clients.authority.authorize({ grantToken: token, call: SEARCH });
    await expect(failed).rejects.toMatchObject({ code: INTERNAL, details: "internal error" });

    const faults = logLines
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((entry) => entry["msg"] === "rpc failed");
    expect(faults).toHaveLength(1);
    expect(faults[0]).toMatchObject({
      method: "/charter.v1.AuthorityService/Authorize",
      status: "INTERNAL",
      err: {
        type: "TokenError",
        code: "KEY_INVALID",
        message: expect.stringContaining(`stored key ${CORRUPT_KID} is unusable`) as unknown,
      },
    });
    expect(logLines.join("\n")).not.toContain(token);
  });

  it("keeps answering tokens of the keys it holds", async () => {
    const after = await charter.clients.authority.authorize({
      grantToken: genuine.token,
      call: { ...SEARCH, callId: "c-2" },
    });
    expect(after.verdict).toMatchObject({ decision: Decision.ALLOW });
  });
});
