import type { ArchiveItem } from "../core/audit-witness.js";
import type { AuditCheckpoint } from "../store/port.js";
import type { AuthorityContext } from "./context.js";

/** Where an archive run ends: records before the newest checkpoint at or before a seq, or signed at or before a time. */
export type ArchiveBefore = { readonly seq: number } | { readonly at: number };

const PAGE = 1000;

/**
 * The checkpoint an archive run ends at: the newest one at or before `before` that is past the
 * store's first record (so the run archives at least one record); undefined when there is none.
 */
export async function archiveAnchor(
  ctx: Pick<AuthorityContext, "store">,
  before: ArchiveBefore,
): Promise<AuditCheckpoint | undefined> {
  const firstKept = (await ctx.store.readAudit(0, 1))[0]?.seq ?? 0;
  const fits = (cp: AuditCheckpoint) =>
    "seq" in before ? cp.seq <= before.seq : cp.at <= before.at;
  return (await ctx.store.listCheckpoints()).filter((cp) => cp.seq > firstKept && fits(cp)).at(-1);
}

/**
 * What an archive run to `anchor` exports, oldest first: the store's records from its first one
 * to the anchor record (that one stays in the store too, and anchors the kept chain), each
 * followed by its checkpoint when it has one.
 */
export async function* archiveItems(
  ctx: Pick<AuthorityContext, "store">,
  anchor: AuditCheckpoint,
): AsyncGenerator<ArchiveItem> {
  const checkpoints = new Map(
    (await ctx.store.listCheckpoints())
      .filter((cp) => cp.seq <= anchor.seq)
      .map((cp) => [cp.seq, cp]),
  );
  let after = 0;
  for (
    let page = await ctx.store.readAudit(0, PAGE);
    page.length > 0;
    page = await ctx.store.readAudit(after, PAGE)
  ) {
    for (const record of page) {
      if (record.seq > anchor.seq) return;
      yield { record };
      const checkpoint = checkpoints.get(record.seq);
      if (checkpoint !== undefined) yield { checkpoint };
      after = record.seq;
    }
  }
}
