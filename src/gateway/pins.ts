import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { mcpToolDigest } from "../interop/dialects/index.js";

/** Whether an upstream tool may be exposed: it matches its catalog pin, or why not. */
export type PinState = { readonly ok: true } | { readonly ok: false; readonly problem: string };

/**
 * Compares an upstream server's tools with the catalog's pins. A tool whose name the catalog pins
 * but whose description or input schema differs is a "rug pull": it is not exposed and its calls
 * are refused. Tools the catalog does not pin are not judged here (the grant's view leaves them out).
 */
export function checkPins(
  upstream: readonly Tool[],
  pins: ReadonlyMap<string, string>,
): Map<string, PinState> {
  const out = new Map<string, PinState>();
  for (const tool of upstream) {
    const pin = pins.get(tool.name);
    if (pin === undefined) continue;
    out.set(
      tool.name,
      mcpToolDigest(tool) === pin
        ? { ok: true }
        : {
            ok: false,
            problem: `the upstream tool "${tool.name}" differs from the catalog's descriptor (description or input schema changed)`,
          },
    );
  }
  return out;
}
