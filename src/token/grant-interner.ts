import { canonicalJson } from "../core/digest.js";
import { deepFreeze } from "../core/json.js";
import type { TaskGrant } from "../core/grant.js";
import type { ActionCaveats } from "../core/policy.js";

/** A grant as the verifier keeps it, and the bytes it is counted as beyond what it shares. */
export interface CompactGrant {
  readonly grant: TaskGrant;
  readonly bytes: number;
}

/** Counted for every cached grant: the grant and limits objects, the cache's entry and key, the grant's index (measured: about 1.9 KB for a grant of two actions). */
export const ENTRY_BASE_BYTES = 2048;
/** A list element or a caveats member: a pointer plus its share of the backing store and hash table (measured). */
const SLOT_BYTES = 16;
/** A string's header and its map entry, beyond two bytes a character (counted as two-byte strings: an upper bound). */
const STRING_BYTES = 48;
/** A parsed caveat record weighs about twice its canonical text, plus its objects' headers; its key is the text itself. */
const CAVEAT_BYTES_PER_CHAR = 4;
const CAVEAT_BYTES = 512;

const LISTS = ["chain", "allowed", "approvalRequired", "denied", "sources"] as const;
const STRINGS = [
  "id",
  "rootId",
  "parentId",
  "subject",
  "owner",
  "purpose",
  "profile",
  "catalogVersion",
  "mode",
] as const;
const KNOWN = new Set<string>([...LISTS, ...STRINGS, "caveats", "issuedAt", "expiresAt", "limits"]);

/**
 * Shares what cached grants hold alike, so that one cached grant costs about its own ids and
 * pointers: every grant of a deployment names the same few thousand action and source ids, and
 * carries caveats copied from the same policy, but each token parses into fresh copies of them.
 * The interner keeps one copy of each id (and of each distinct caveat record, by canonical text),
 * frozen, and stops sharing once it holds `maxBytes`: nothing it holds is ever dropped (cached
 * grants point into it), so its memory is bounded by that figure, and a grant whose parts it
 * could not share is counted in full.
 */
export class GrantInterner {
  readonly #maxBytes: number;
  readonly #strings = new Map<string, string>();
  readonly #caveats = new Map<string, ActionCaveats>();
  #bytes = 0;

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  /** What the shared copies are counted as, together; never more than `maxBytes` (plus one value). */
  get bytes(): number {
    return this.#bytes;
  }

  /** The grant with its ids and caveats shared, deep-frozen, and the bytes it holds of its own. */
  compact(grant: TaskGrant): CompactGrant {
    let bytes = ENTRY_BASE_BYTES;
    const own = (text: string) => 2 * text.length + STRING_BYTES;
    const list = (ids: readonly string[]) => {
      bytes += SLOT_BYTES * (ids.length + 1);
      return Object.freeze(ids.map((id) => this.#string(id, () => (bytes += own(id)))));
    };
    for (const key of STRINGS) {
      const value = grant[key];
      if (typeof value === "string") bytes += own(value);
    }
    const caveats = Object.fromEntries(
      Object.entries(grant.caveats).map(([actionId, record]) => {
        bytes += SLOT_BYTES * 2;
        const id = this.#string(actionId, () => (bytes += own(actionId)));
        return [
          id,
          this.#caveat(record, (chars) => (bytes += CAVEAT_BYTES_PER_CHAR * chars + CAVEAT_BYTES)),
        ] as const;
      }),
    );
    // Members a later version adds are kept as they are, counted by their JSON text.
    for (const [key, value] of Object.entries(grant))
      if (!KNOWN.has(key)) bytes += own(JSON.stringify(value));
    const compact = {
      ...grant,
      chain: list(grant.chain),
      allowed: list(grant.allowed),
      approvalRequired: list(grant.approvalRequired),
      denied: list(grant.denied),
      sources: list(grant.sources),
      caveats: Object.freeze(caveats),
    };
    return { grant: deepFreeze(compact), bytes };
  }

  /** The shared copy of `text`; `unshared` is told when the interner is full and the caller keeps its own. */
  #string(text: string, unshared: () => void): string {
    const known = this.#strings.get(text);
    if (known !== undefined) return known;
    const cost = 2 * text.length + STRING_BYTES;
    if (this.#bytes + cost > this.#maxBytes) {
      unshared();
      return text;
    }
    this.#strings.set(text, text);
    this.#bytes += cost;
    return text;
  }

  #caveat(record: ActionCaveats, unshared: (chars: number) => void): ActionCaveats {
    const key = canonicalJson(record);
    const known = this.#caveats.get(key);
    if (known !== undefined) return known;
    const cost = CAVEAT_BYTES_PER_CHAR * key.length + CAVEAT_BYTES;
    if (this.#bytes + cost > this.#maxBytes) {
      unshared(key.length);
      return deepFreeze(record);
    }
    const shared = deepFreeze(record);
    this.#caveats.set(key, shared);
    this.#bytes += cost;
    return shared;
  }
}
