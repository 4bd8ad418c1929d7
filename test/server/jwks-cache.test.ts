import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { rotateSigningKey } from "../../src/authority/index.js";
import { startTestCharter, type TestCharter } from "../support/charter-server.js";

// GetJwks answers one prepared message while the key set is the same, and a new one at once
// when it changes.

let charter: TestCharter;
beforeEach(async () => {
  charter = await startTestCharter();
});
afterEach(async () => {
  await charter.stop();
});

const kids = async () => {
  const answer = await charter.clients.keys.getJwks({});
  const fromJson = (JSON.parse(answer.jwksJson) as { keys: { kid: string }[] }).keys.map(
    (k) => k.kid,
  );
  expect(answer.keys.map((k) => k.kid)).toEqual(fromJson);
  return fromJson;
};

describe("GetJwks", () => {
  it("publishes a rotated key right after the rotation, beside the old one", async () => {
    const before = await kids();
    expect(await kids()).toEqual(before);
    const kid = await rotateSigningKey(charter.server.context);
    const after = await kids();
    expect(after).toHaveLength(before.length + 1);
    expect(after).toEqual(expect.arrayContaining([...before, kid]));
  });
});
