import { readFileSync } from "node:fs";
import { ServerCredentials } from "@grpc/grpc-js";
import {
  ConfigError,
  parseClientRoles,
  parseSpiffeRoles,
  type CharterConfig,
  type SpiffeRoles,
} from "../config/config.js";
import { checkPrivateFile } from "./private-files.js";

/** The transport security a configuration asks for. */
export interface TransportSecurity {
  readonly credentials: ServerCredentials;
  /** TLS is on. */
  readonly tls: boolean;
  /** Clients must present a certificate signed by the client CA. */
  readonly mutual: boolean;
  /** Client certificate CN -> roles. */
  readonly certificateRoles: ReadonlyMap<string, readonly string[]>;
  /** Client certificate SPIFFE ID (its URI SAN) -> roles. */
  readonly spiffeRoles: SpiffeRoles;
}

/**
 * Plaintext, TLS (`tlsCert` + `tlsKey`), or mutual TLS (`tlsClientCa` too: a client without a
 * certificate the CA signed is refused in the handshake). The private key file must be the
 * owner's alone.
 */
export function transportSecurity(
  config: Pick<
    CharterConfig,
    "tlsCert" | "tlsKey" | "tlsClientCa" | "tlsClientRoles" | "tlsSpiffeRoles"
  >,
): TransportSecurity {
  const roles = parseClientRoles(config.tlsClientRoles);
  if (typeof roles === "string") throw new ConfigError(`tlsClientRoles: ${roles}`);
  const spiffeRoles = parseSpiffeRoles(config.tlsSpiffeRoles);
  if (typeof spiffeRoles === "string") throw new ConfigError(`tlsSpiffeRoles: ${spiffeRoles}`);
  if (config.tlsCert === "")
    return {
      credentials: ServerCredentials.createInsecure(),
      tls: false,
      mutual: false,
      certificateRoles: roles,
      spiffeRoles,
    };
  checkPrivateFile(config.tlsKey, "TLS private key");
  const pair = {
    cert_chain: read(config.tlsCert, "tlsCert"),
    private_key: read(config.tlsKey, "tlsKey"),
  };
  const mutual = config.tlsClientCa !== "";
  const ca = mutual ? read(config.tlsClientCa, "tlsClientCa") : null;
  try {
    return {
      credentials: ServerCredentials.createSsl(ca, [pair], mutual),
      tls: true,
      mutual,
      certificateRoles: roles,
      spiffeRoles,
    };
  } catch (err) {
    throw new ConfigError(
      `TLS settings are unusable: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
}

function read(file: string, setting: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    throw new ConfigError(
      `${setting}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? String(err)})`,
    );
  }
}
