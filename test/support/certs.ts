import { execFileSync } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** PEM files of a test PKI: a CA, a server certificate for localhost/127.0.0.1, and client certificates. */
export interface TestPki {
  readonly dir: string;
  readonly caCert: string;
  readonly serverCert: string;
  readonly serverKey: string;
  /** A client certificate the CA signed, subject CN = `cn`. */
  client(cn: string): { readonly cert: string; readonly key: string };
  /** A client certificate signed by another CA the server does not trust. */
  stranger(cn: string): { readonly cert: string; readonly key: string };
  /**
   * An X.509-SVID as SPIRE issues it: the URI SANs `uris`, subject `O=SPIRE` (no CN unless `cn`),
   * a leaf (unless `ca`: a CA that may also sign handshakes) for client and server auth, signed by the CA (another one: `stranger`).
   */
  svid(
    uris: readonly string[],
    options?: SvidOptions,
  ): { readonly cert: string; readonly key: string };
}

/** How `TestPki.svid` differs from a well-formed SVID of the trusted CA. */
export interface SvidOptions {
  readonly cn?: string;
  readonly ca?: boolean;
  readonly stranger?: boolean;
}

const openssl = (args: string[], cwd: string) =>
  execFileSync("openssl", args, { cwd, stdio: ["ignore", "ignore", "pipe"] });

/** Generates a PKI with the system's openssl (Debian ships it); Ed25519 keys, one day of validity. */
export function makeTestPki(): TestPki {
  const dir = mkdtempSync(join(tmpdir(), "charter-pki-"));
  const selfSigned = (name: string, cn: string) => {
    openssl(
      [
        "req",
        "-x509",
        "-newkey",
        "ed25519",
        "-nodes",
        "-keyout",
        `${name}.key`,
        "-out",
        `${name}.pem`,
        "-days",
        "1",
        "-subj",
        `/CN=${cn}`,
      ],
      dir,
    );
  };
  const signed = (name: string, cn: string, ca: string, ext: string, subject = `/CN=${cn}`) => {
    openssl(
      [
        "req",
        "-newkey",
        "ed25519",
        "-nodes",
        "-keyout",
        `${name}.key`,
        "-out",
        `${name}.csr`,
        "-subj",
        subject,
      ],
      dir,
    );
    writeFileSync(join(dir, `${name}.ext`), ext);
    openssl(
      [
        "x509",
        "-req",
        "-in",
        `${name}.csr`,
        "-CA",
        `${ca}.pem`,
        "-CAkey",
        `${ca}.key`,
        "-CAcreateserial",
        "-out",
        `${name}.pem`,
        "-days",
        "1",
        "-extfile",
        `${name}.ext`,
      ],
      dir,
    );
    chmodSync(join(dir, `${name}.key`), 0o600);
  };
  selfSigned("ca", "Charter Test CA");
  selfSigned("other-ca", "Someone Else's CA");
  signed(
    "server",
    "localhost",
    "ca",
    "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n",
  );
  const read = (f: string) => readFileSync(join(dir, f), "utf8");
  let n = 0;
  const clientOf = (ca: string) => (cn: string) => {
    const name = `client-${(n += 1)}`;
    signed(name, cn, ca, "extendedKeyUsage=clientAuth\n");
    return { cert: read(`${name}.pem`), key: read(`${name}.key`) };
  };
  return {
    dir,
    caCert: join(dir, "ca.pem"),
    serverCert: join(dir, "server.pem"),
    serverKey: join(dir, "server.key"),
    client: clientOf("ca"),
    stranger: clientOf("other-ca"),
    svid(uris, options = {}) {
      const name = `svid-${(n += 1)}`;
      const subject = options.cn === undefined ? "/O=SPIRE/C=US" : `/O=SPIRE/CN=${options.cn}`;
      const ext = [
        ...(options.ca === true
          ? ["basicConstraints=critical,CA:TRUE", "keyUsage=critical,digitalSignature,keyCertSign"]
          : ["basicConstraints=critical,CA:FALSE", "keyUsage=critical,digitalSignature"]),
        "extendedKeyUsage=clientAuth,serverAuth",
        "subjectAltName=critical,@alt",
        "[alt]",
        // Escaped for openssl's config syntax (# starts a comment, $ a variable).
        ...uris.map((uri, i) => `URI.${i + 1}=${uri.replace(/[\\#$"']/g, (c) => `\\${c}`)}`),
        "",
      ].join("\n");
      signed(name, "", options.stranger === true ? "other-ca" : "ca", ext, subject);
      return { cert: read(`${name}.pem`), key: read(`${name}.key`) };
    },
  };
}
