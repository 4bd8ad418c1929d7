import type { Logger } from "pino";
import type { AuthorityContext } from "../authority/index.js";
import type { Interceptor } from "./interceptor.js";

/**
 * Fails every call UNAVAILABLE once the store can no longer answer — its file deleted, replaced,
 * truncated or overwritten in place by another store under the running server, say — before
 * authentication or the handler run, so even an RPC served from memory (GetJwks) says the server
 * is not fit to answer. The first failure is logged at error. Costs the store's identity check
 * (on SQLite two `stat`s and a 12-byte read of the file's header, once per turn of the event loop).
 */
export function storeIntegrityInterceptor(
  ctx: Pick<AuthorityContext, "store">,
  log?: Logger,
): Interceptor {
  let logged = false;
  return (next) => (request, call) =>
    ctx.store.checkIntact().then(
      () => next(request, call),
      (err: unknown) => {
        if (!logged) {
          logged = true;
          log?.error(
            { event: "store.not_intact", err: { message: (err as Error).message } },
            "the store is no longer the one opened; every call fails UNAVAILABLE until Charter is restarted on an intact store",
          );
        }
        throw err;
      },
    );
}
