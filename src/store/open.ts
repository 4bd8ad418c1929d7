// provisional: replaced by the store branch
import { join } from "node:path";
import type { Store } from "./port.js";
import { openSqliteStore } from "./sqlite/open.js";
export interface OpenStoreOptions { readonly dataDir: string; readonly url?: string; readonly now?: () => number; readonly busyTimeoutMs?: number }
export function openStore(options: OpenStoreOptions): Promise<Store> {
  return openSqliteStore({ file: join(options.dataDir, "charter.db"), ...(options.now ? { now: options.now } : {}) });
}
