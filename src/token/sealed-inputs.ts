import { isSealed, openSealedText, sealText, type KeyEncryptionKey } from "./sealed-keys.js";
import { TokenError } from "./errors.js";

/**
 * How a decision's retained inputs (its arguments and the run it was decided on) are kept at
 * rest: sealed with AES-256-GCM under the key-encryption key when one is configured, exactly as
 * the signing keys are, the decision id bound in as additional data (a sealed text moved to
 * another decision's row does not open); in clear, protected by the store's permissions, without.
 */
export interface DecisionInputSealer {
  /** The KEK's id, or undefined when inputs are kept in clear. */
  readonly kekId: string | undefined;
  seal(decisionId: string, text: string): string;
  /** The text; a sealed text without the KEK, under another KEK or tampered is KEY_SEALED. */
  open(decisionId: string, stored: string): string;
}

export function decisionInputSealer(kek: KeyEncryptionKey | undefined): DecisionInputSealer {
  const aad = (decisionId: string) => `charter-decision-inputs:${decisionId}`;
  return {
    kekId: kek?.id,
    seal: (decisionId, text) => (kek === undefined ? text : sealText(text, aad(decisionId), kek)),
    open(decisionId, stored) {
      if (!isSealed(stored)) return stored;
      const opened = openSealedText(stored, aad(decisionId), kek);
      if ("text" in opened) return opened.text;
      const why =
        opened.problem === "no-kek"
          ? "they are sealed: configure the key-encryption key (kekFile or CHARTER_KEK)"
          : opened.problem === "other-kek"
            ? `they were sealed with key-encryption key ${opened.kekId}, not the configured ${kek?.id ?? ""}`
            : "they do not open with the configured key-encryption key (tampered, or moved from another decision)";
      throw new TokenError("KEY_SEALED", `decision ${decisionId}: its retained inputs: ${why}`);
    },
  };
}
