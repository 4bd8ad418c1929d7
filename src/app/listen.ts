import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { ConfigError, parseListen } from "../config/config.js";

/** Where the server will bind: the configured name and the addresses it stands for. */
export interface ListenPlan {
  readonly host: string;
  readonly port: number;
  /** The addresses bound, literally (a name is resolved once, here, and its addresses are bound). */
  readonly addresses: readonly string[];
  /** Every address is a loopback address. */
  readonly loopbackOnly: boolean;
}

/**
 * Resolves the listen setting to the addresses the server will actually bind, so that what is
 * checked is what is bound: `localhost` may resolve to anything /etc/hosts says, and `0.0.0.0`
 * or `::` mean every interface.
 */
export async function planListen(listen: string): Promise<ListenPlan> {
  const parsed = parseListen(listen);
  if (!parsed) throw new ConfigError(`listen must be host:port, got "${listen}"`);
  let addresses: string[];
  if (isIP(parsed.host) !== 0) addresses = [parsed.host];
  else {
    try {
      addresses = [
        ...new Set(
          (await lookup(parsed.host, { all: true, verbatim: true })).map((a) => a.address),
        ),
      ];
    } catch (err) {
      throw new ConfigError(
        `listen: cannot resolve "${parsed.host}" (${(err as NodeJS.ErrnoException).code ?? String(err)})`,
      );
    }
  }
  if (addresses.length === 0)
    throw new ConfigError(`listen: "${parsed.host}" resolves to no address`);
  return {
    host: parsed.host,
    port: parsed.port,
    addresses,
    loopbackOnly: addresses.every(isLoopbackAddress),
  };
}

/** True for 127.0.0.0/8, ::1 and IPv4-mapped loopback (::ffff:127.x.y.z); never for 0.0.0.0 or ::. */
export function isLoopbackAddress(address: string): boolean {
  const v4 = address.toLowerCase().replace(/^::ffff:/, "");
  if (isIP(v4) === 4) return v4.split(".")[0] === "127";
  if (isIP(address) !== 6) return false;
  return /^(0{0,4}:){2,7}0{0,3}1$/.test(address.toLowerCase()) || address === "::1";
}

/**
 * Protected mode: without an API key and without mutual TLS nobody can be told apart, so the
 * server serves loopback only; asked for any other address (judged by the addresses it resolves
 * to, not the name) it refuses to start.
 */
export function checkExposure(
  listen: string,
  plan: ListenPlan,
  auth: { readonly keys: boolean; readonly mutualTls: boolean },
): void {
  if (plan.loopbackOnly || auth.keys || auth.mutualTls) return;
  const resolved = plan.addresses.join(", ") === plan.host ? "" : ` (${plan.addresses.join(", ")})`;
  throw new ConfigError(
    `refusing to listen on ${listen}${resolved}: no API key and no client certificate authority is configured, so Charter serves only on loopback (127.0.0.1, ::1); create an API key (charter keys create) or configure mutual TLS (tlsClientCa) to listen elsewhere`,
  );
}
