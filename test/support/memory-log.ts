import { Writable } from "node:stream";
import { pino, type Logger } from "pino";

/** A pino logger writing JSON lines into memory, so a test can read what was logged. */
export interface MemoryLog {
  readonly log: Logger;
  /** Every line logged so far, parsed. */
  lines(): Record<string, unknown>[];
  /** Everything logged so far, as text (to check that a secret never appears). */
  text(): string;
  /** Forgets what was logged so far. */
  clear(): void;
}

export function memoryLog(): MemoryLog {
  const chunks: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString("utf8"));
      done();
    },
  });
  const text = () => chunks.join("");
  return {
    log: pino({ level: "info" }, sink),
    text,
    lines: () =>
      text()
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => JSON.parse(l) as Record<string, unknown>),
    clear: () => {
      chunks.length = 0;
    },
  };
}
