import { randomUUID } from "node:crypto";

/**
 * A UUID in the layout of version 7 (RFC 9562): the first 48 bits are the Unix time in
 * milliseconds, then the version (7), 74 random bits (from `randomUUID`) and the variant. An id
 * made in a later millisecond sorts after an earlier one (ids of one millisecond sort at random),
 * so a table keyed by these ids grows at the end of its index instead of writing into a random
 * page per row. The random part keeps ids unique and unguessable; the time part is not a claim
 * anybody checks.
 */
export function timeOrderedUuid(nowMs: number = Date.now()): string {
  // xxxxxxxx-xxxx-4xxx-Vxxx-xxxxxxxxxxxx: what follows the version digit is kept.
  const random = randomUUID();
  const time = Math.floor(nowMs).toString(16).padStart(12, "0").slice(-12);
  return `${time.slice(0, 8)}-${time.slice(8)}-7${random.slice(15)}`;
}
