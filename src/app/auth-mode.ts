import type { Logger } from "pino";
import type { AuthorityContext } from "../authority/index.js";
import { ConfigError, type CharterConfig } from "../config/config.js";

/** How anonymous callers are treated: `keys` refuses them; `none` is protected mode while the store never held a key. */
export type AuthMode = "keys" | "none";

/** What to run to create the first key, in every message that says a key is needed. */
export const CREATE_KEY_HINT = "charter keys create --principal NAME --role admin";

/** Where the store records the mode it was last served in (`StoreMetaStore`). */
const AUTH_MODE_META = "auth_mode";

/**
 * The caller-authentication mode of a server about to serve, decided once at start:
 *
 * - `auth: none` (protected mode) is refused unless the server listens on loopback only and has no
 *   client CA. It lets anonymous callers act as the local operator only while the store has never
 *   held an API key (`Store.protectedModeEnded`): the first key ever created ends it for good, so
 *   revoking every key afterwards leaves anonymous callers refused. The end is logged at warn once,
 *   by the first call that sees it.
 * - `auth: keys` (the default): anonymous callers are always refused.
 *
 * A mode other than the one the store was last served in, the mode at start and a `keys` server
 * without any key are all logged at warn. Answers `protectedMode`, asked per anonymous call
 * (undefined: never), or throws a ConfigError.
 */
export async function decideAuthMode(
  ctx: Pick<AuthorityContext, "store">,
  config: Pick<CharterConfig, "auth">,
  where: {
    readonly loopbackOnly: boolean;
    readonly mutualTls: boolean;
    /** Whether the store holds an active API key now (the server reads it once at start). */
    readonly keys: boolean;
    readonly log: Logger;
  },
): Promise<(() => Promise<boolean>) | undefined> {
  const mode: AuthMode = config.auth ?? "keys";
  const { log, store } = { log: where.log, store: ctx.store };
  if (mode === "none" && (!where.loopbackOnly || where.mutualTls))
    throw new ConfigError(
      `auth: none (protected mode: anonymous callers act as admin) is allowed only on a loopback listen address without tlsClientCa; set auth: keys and create an API key (${CREATE_KEY_HINT})`,
    );
  const previous = await store.readMeta(AUTH_MODE_META);
  if (previous !== mode) {
    if (previous !== undefined)
      log.warn(
        { event: "auth.mode_changed", previous, auth: mode },
        `auth mode changed since this store was last served: ${previous} -> ${mode}`,
      );
    await store.writeMeta(AUTH_MODE_META, mode);
  }
  if (mode === "keys") {
    if (!where.keys)
      log.warn(
        { event: "auth.no_keys", auth: mode },
        `auth: keys and no API key exists: every call without a client certificate is refused until one is created (${CREATE_KEY_HINT})`,
      );
    return undefined;
  }
  if (await store.protectedModeEnded()) {
    log.warn(
      { event: "auth.protected_mode_ended", auth: mode },
      "auth: none, but protected mode ended when this store's first API key was created: anonymous callers are refused UNAUTHENTICATED",
    );
    return undefined;
  }
  log.warn(
    { event: "auth.protected_mode", auth: mode },
    `auth: none — protected mode, anonymous local callers act as admin until the first API key is created (${CREATE_KEY_HINT})`,
  );
  let ended = false;
  return async () => {
    if (ended) return false;
    const now = await store.protectedModeEnded();
    if (now) {
      ended = true;
      log.warn(
        { event: "auth.protected_mode_ended", auth: mode },
        "protected mode ended: this store's first API key was created; anonymous callers are refused UNAUTHENTICATED from now on, also after every key is revoked",
      );
    }
    return !ended;
  };
}
