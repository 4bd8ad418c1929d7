import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { mcpToolDigest } from "../interop/dialects/index.js";

/** Whether an upstream tool may be exposed: it matches its catalog pin, or why not. */
export type PinState = { readonly ok: true } | { readonly ok: false; readonly problem: string };

/**
 * Compares an upstream server's tools with the catalog's pins. A tool whose name the catalog pins
 * but whose description or input schema differs is a "rug pull": it is not exposed and its calls
 * are refused. A pinned name the upstream lists more than once is refused whatever the copies
 * hold: which one a call reaches is the upstream's choice, so no copy matching the pin makes the
 * name safe. Tools the catalog does not pin are not judged here (the grant's view leaves them out).
 */
export function checkPins(
  upstream: readonly Tool[],
  pins: ReadonlyMap<string, string>,
): Map<string, PinState> {
  const listed = new Map<string, Tool[]>();
  for (const tool of upstream) {
    if (!pins.has(tool.name)) continue;
    const copies = listed.get(tool.name);
    if (copies) copies.push(tool);
    else listed.set(tool.name, [tool]);
  }
  const out = new Map<string, PinState>();
  for (const [name, copies] of listed) out.set(name, stateOf(name, copies, pins.get(name)));
  return out;
}

function stateOf(name: string, copies: readonly Tool[], pin: string | undefined): PinState {
  if (copies.length > 1)
    return {
      ok: false,
      problem: `the upstream lists the tool "${name}" ${copies.length} times (a tool name must be listed once); the name is refused`,
    };
  const [tool] = copies;
  return tool !== undefined && mcpToolDigest(tool) === pin
    ? { ok: true }
    : {
        ok: false,
        problem: `the upstream tool "${name}" differs from the catalog's descriptor (description or input schema changed)`,
      };
}
