import { status, type ServiceError } from "@grpc/grpc-js";
import { createAppContext, type AppContext } from "../app/context.js";
import { isAuthorityError } from "../authority/index.js";
import { createCharterClients, type CharterClients } from "../client/index.js";
import type { CharterConfig } from "../config/config.js";
import { isDecodeError } from "../interop/decode-error.js";
import { toGrpcStatus } from "../server/rpc-error.js";
import type { CliIo } from "./io.js";

/** Exit code when the request was refused — by a running server or by the data dir's authority offline. */
export const EXIT_RPC_FAILED = 69;

/** Where a command's request goes: a running server (`--server`), or the data dir's application layer. */
export type Target = { readonly kind: "server"; readonly clients: CharterClients } | { readonly kind: "local"; readonly ctx: AppContext };

/** The server address from --server or CHARTER_SERVER; undefined means "work offline on the data dir". */
export function serverAddress(flag: string | undefined, io: CliIo): string | undefined {
  const address = flag ?? io.env["CHARTER_SERVER"];
  return address === undefined || address === "" ? undefined : address;
}

/**
 * Runs `fn` against the server at `address`, or offline against the application layer over the
 * data dir of `config()` (the server's store and keys, so tokens are interchangeable). Either
 * way a refusal prints the same `STATUS: message` line and answers EXIT_RPC_FAILED.
 */
export async function withTarget(address: string | undefined, config: () => Promise<CharterConfig>, io: CliIo, fn: (target: Target) => Promise<number>): Promise<number> {
  if (address !== undefined) {
    const clients = createCharterClients({ address });
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
  return err instanceof Error && typeof (err as Partial<ServiceError>).code === "number" && "details" in err;
}
