import { describe, expect, it } from "vitest";
import { decisionInputSealer, parseKek } from "../../src/token/index.js";

const kek = parseKek(Buffer.alloc(32, 1).toString("base64"));
const other = parseKek(Buffer.alloc(32, 2).toString("base64"));
const TEXT = '{"arguments":{"order_id":"ord_A1B2C3","amount":40}}';

describe("decision inputs at rest", () => {
  it("are sealed under the KEK (nothing of the arguments in clear) and open for the same decision", () => {
    const sealer = decisionInputSealer(kek);
    const sealed = sealer.seal("dec_1", TEXT);
    expect(sealed).toMatch(/^\{"sealed":"A256GCM"/);
    expect(sealed).not.toContain("ord_A1B2C3");
    expect(sealer.open("dec_1", sealed)).toBe(TEXT);
    expect(sealer.kekId).toBe(kek.id);
  });

  it("do not open moved to another decision, under another KEK, without a KEK, or tampered", () => {
    const sealed = decisionInputSealer(kek).seal("dec_1", TEXT);
    expect(() => decisionInputSealer(kek).open("dec_2", sealed)).toThrow(
      /moved from another decision/,
    );
    expect(() => decisionInputSealer(other).open("dec_1", sealed)).toThrow(
      new RegExp(`sealed with key-encryption key ${kek.id}, not the configured ${other.id}`),
    );
    expect(() => decisionInputSealer(undefined).open("dec_1", sealed)).toThrow(
      /configure the key-encryption key/,
    );
    const envelope = JSON.parse(sealed) as { ct: string };
    const flipped = JSON.stringify({
      ...envelope,
      ct: `${envelope.ct.startsWith("A") ? "B" : "A"}${envelope.ct.slice(1)}`,
    });
    expect(flipped).not.toBe(sealed);
    expect(() => decisionInputSealer(kek).open("dec_1", flipped)).toThrow(/KEY_SEALED|tampered/);
  });

  it("are kept in clear without a KEK, and read back as they were", () => {
    const sealer = decisionInputSealer(undefined);
    expect(sealer.seal("dec_1", TEXT)).toBe(TEXT);
    expect(sealer.open("dec_1", TEXT)).toBe(TEXT);
    expect(sealer.kekId).toBeUndefined();
  });
});
