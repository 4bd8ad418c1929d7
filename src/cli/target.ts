import { status, type ServiceError } from "@grpc/grpc-js";
import { createAppContext, type AppContext } from "../app/context.js";
import { isAuthorityError } from "../authority/index.js";
import { createCharterClients, type CharterClients } from "../client/index.js";
import { CLIENT_SETTINGS, type CharterConfig } from "../config/config.js";
import { isDecodeError } from "../interop/decode-error.js";
import { toGrpcStatus } from "../server/rpc-error.js";
import type { CliIo } from "./io.js";

/** Exit code when the request was refused — by a running server or by the data dir's authority offline. */
export const EXIT_RPC_FAILED = 69;

/** Where a command's request goes: a running server (`--server`), or the data dir's application layer. */
export type Target =
  | { readonly kind: "server"; readonly clients: CharterClients }
  | { readonly kind: "local"; readonly ctx: AppContext };

/** A running server to send the request to, and the API key to present (`authorization: Bearer <key>`). */
export interface ServerSpec {
  readonly address: string;
  readonly apiKey?: string;
}

/** Flags of the commands that can ask a running server. */
export const SERVER_FLAGS = {
  [CLIENT_SETTINGS.server.flag]: { type: "string" },
  [CLIENT_SETTINGS.apiKey.flag]: { type: "string" },
} as const;

/**
 * The server from --server or CHARTER_SERVER, with the key from --api-key or CHARTER_API_KEY;
 * undefined means "work offline on the data dir".
 */
export function serverAddress(
  flag: string | undefined,
  io: CliIo,
  apiKeyFlag?: string,
): ServerSpec | undefined {
  const address = flag ?? io.env[CLIENT_SETTINGS.server.env];
  if (address === undefined || address === "") return undefined;
  const apiKey = apiKeyFlag ?? io.env[CLIENT_SETTINGS.apiKey.env];
  return apiKey === undefined || apiKey === "" ? { address } : { address, apiKey };
}

/** Clients for a running server, presenting its API key (`authorization: Bearer <key>`) when one is set. */
export function serverClients(server: ServerSpec): CharterClients {
  return createCharterClients({
    address: server.address,
    ...(server.apiKey === undefined
      ? {}
      : { metadata: { authorization: `Bearer ${server.apiKey}` } }),
  });
}

/**
 * Runs `fn` against the server (presenting its API key, if any), or offline against the application layer over the
 * data dir of `config()` (the server's store and keys, so tokens are interchangeable). Either
 * way a refusal prints the same `STATUS: message` line and answers EXIT_RPC_FAILED.
 */
export async function withTarget(
  server: ServerSpec | undefined,
  config: () => Promise<CharterConfig>,
  io: CliIo,
  fn: (target: Target) => Promise<number>,
): Promise<number> {
  if (server !== undefined) {
    const clients = serverClients(server);
    try {
      return await fn({ kind: "server", clients });
    } catch (err) {
      if (!isServiceError(err)) throw err;
      io.err(`${statusName(err.code)}: ${err.details}`);
      return EXIT_RPC_FAILED;
    } finally {
      clients.close();
    }
  }
  const ctx = await createAppContext(await config(), { tokenCacheSize: 1 });
  try {
    return await fn({ kind: "local", ctx });
  } catch (err) {
    if (!isAuthorityError(err) && !isDecodeError(err)) throw err;
    const s = toGrpcStatus(err);
    io.err(`${status[s.code]}: ${s.details}`);
    return EXIT_RPC_FAILED;
  } finally {
    await ctx.close();
  }
}

/** The status's name (`UNAVAILABLE`), or its number when this grpc-js does not know it. */
function statusName(code: number): string {
  return (status as Record<number, string | undefined>)[code] ?? String(code);
}

function isServiceError(err: unknown): err is ServiceError {
  return (
    err instanceof Error &&
    typeof (err as Partial<ServiceError>).code === "number" &&
    "details" in err
  );
}
