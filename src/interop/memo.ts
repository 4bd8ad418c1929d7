import { deepFreeze } from "../core/json.js";
import { isSharedEntry, type ViewEntry } from "../core/project.js";
import type { ToolEntry } from "../gen/charter/v1/common_pb.js";

// The codecs' memo tables: the only module-level caches of `src/interop`
// (test/architecture/module-state.test.ts fails on one anywhere else). The codecs are pure and
// reach no application context, so these stay here, and they are safe to share between
// contexts: each is keyed weakly by a frozen value — a view entry every view of an action
// shares (`isSharedEntry`), or a rendering made from one — and holds only a function of it.
// Nothing can change what a codec answers, and an entry goes with its key.

/** The proto message of each shared view entry, made once and frozen (`viewToProto`). */
export const sharedEntryMessages = new WeakMap<ViewEntry, ToolEntry>();

/**
 * The renderings `perEntry` kept, each with its JSON text once `toolsJson` has made it
 * (undefined until then).
 */
export const sharedRenderingTexts = new WeakMap<object, string | undefined>();

/**
 * `render` with its result kept for each shared entry: a rendering is a function of the entry
 * alone, so a shared entry's is made once (per memo: one per dialect, made when its module
 * loads), frozen, and its JSON text once. An entry of a grant's own (narrowed by its caveats) is
 * rendered each time.
 */
export function perEntry<T extends object>(render: (t: ViewEntry) => T): (t: ViewEntry) => T {
  const memo = new WeakMap<ViewEntry, T>();
  return (t) => {
    if (!isSharedEntry(t)) return render(t);
    let out = memo.get(t);
    if (out === undefined) {
      out = deepFreeze(render(t));
      memo.set(t, out);
      sharedRenderingTexts.set(out, undefined);
    }
    return out;
  };
}
