import { initStore } from "../../app/init-store.js";
import type { CliIo } from "../io.js";
import { CONFIG_FLAGS, UsageError, configFrom, parse } from "../options.js";

/**
 * `charter init`: creates a new, empty store on the data dir (or the database): exit 0; exit 1
 * when a store is there already. After a store was lost it starts anew (`initStore`).
 */
export async function initCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(args, CONFIG_FLAGS, true);
  if (positionals.length > 0)
    throw new UsageError(`unexpected argument "${String(positionals[0])}"`);
  const outcome = await initStore(await configFrom(values, io.env));
  if (!outcome.created) {
    io.err(`charter init: ${outcome.reason}`);
    return 1;
  }
  if (outcome.replaced !== undefined)
    io.err(`charter init: store ${outcome.replaced} is gone; starting anew`);
  io.err(`charter init: created ${outcome.store} (store ${outcome.id})`);
  return 0;
}
