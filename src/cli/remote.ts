import { status, type ServiceError } from "@grpc/grpc-js";
import { createCharterClients, type CharterClients } from "../client/index.js";
import type { CliIo } from "./io.js";

/** Exit code when the server could not be asked or refused the request (sysexits EX_UNAVAILABLE). */
export const EXIT_RPC_FAILED = 69;

/** The server address from --server or CHARTER_SERVER; undefined means "work offline on the data dir". */
export function serverAddress(flag: string | undefined, io: CliIo): string | undefined {
  const address = flag ?? io.env["CHARTER_SERVER"];
  return address === undefined || address === "" ? undefined : address;
}

/**
 * Runs `fn` with clients for a running Charter; a gRPC failure is printed as `CODE: details` and
 * answers EXIT_RPC_FAILED.
 */
export async function withServer(address: string, io: CliIo, fn: (clients: CharterClients) => Promise<number>): Promise<number> {
  const clients = createCharterClients({ address });
  try {
    return await fn(clients);
  } catch (err) {
    if (!isServiceError(err)) throw err;
    io.err(`${status[err.code] ?? err.code}: ${err.details}`);
    return EXIT_RPC_FAILED;
  } finally {
    clients.close();
  }
}

function isServiceError(err: unknown): err is ServiceError {
  return err instanceof Error && typeof (err as Partial<ServiceError>).code === "number" && "details" in err;
}
