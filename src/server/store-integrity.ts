import type { AuthorityContext } from "../authority/index.js";
import type { Interceptor } from "./interceptor.js";

/**
 * Fails every call UNAVAILABLE once the store can no longer answer — its file deleted, replaced
 * or truncated under the running server, say — before authentication or the handler run, so
 * even an RPC served from memory (GetJwks) says the server is not fit to answer. Costs the
 * store's identity check (two `stat`s on SQLite) per call.
 */
export function storeIntegrityInterceptor(ctx: Pick<AuthorityContext, "store">): Interceptor {
  return (next) => (request, call) => ctx.store.checkIntact().then(() => next(request, call));
}
