import { isOperationKind, OPERATION_KINDS } from "./action-kind.js";
import type { Catalog } from "./catalog.js";
import type { ProblemList } from "./errors.js";
import { isJsonObject } from "./json.js";

type Lists = [allow: string[], approval: string[], deny: string[]];
const LISTS = ["allow", "approval", "deny"] as const;

/**
 * Adds to a source's allow / approval / deny lists every catalog action that is a graph operation
 * of a kind its `operations` map names (`{allow: [signal], approval: [fork], deny: [job]}`).
 * Resolved here, at load time against the one catalog the policy is checked with, so that a kind
 * rule is nothing but action ids: compose's precedence (deny > approval > allow), delegation's
 * narrowing, decide and the kill switch (a global source's `operations.deny`) all read plain lists.
 * A kind no action of the catalog has yet adds nothing; a kind this version does not know is a
 * load error.
 */
export function withOperationKinds(
  lists: Lists,
  raw: unknown,
  subject: string,
  catalog: Catalog,
  problems: ProblemList,
): Lists {
  if (raw === undefined) return lists;
  if (
    !isJsonObject(raw) ||
    Object.keys(raw).some((k) => !(LISTS as readonly string[]).includes(k))
  ) {
    problems.add(
      subject,
      "operations must be a map of allow, approval and deny to lists of operation kinds",
    );
    return lists;
  }
  return LISTS.map((name, i) => {
    const kinds = raw[name] ?? [];
    const list = lists[i] as string[];
    if (!Array.isArray(kinds) || !kinds.every(isOperationKind)) {
      problems.add(
        `${subject} operations ${name}`,
        `must be a list of operation kinds (${OPERATION_KINDS.join(", ")})`,
      );
      return list;
    }
    const ids = [...catalog.actions.values()]
      .filter((a) => a.operation !== undefined && kinds.includes(a.operation.kind))
      .map((a) => a.id);
    return [...new Set([...list, ...ids])];
  }) as Lists;
}
