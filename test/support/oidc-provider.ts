import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import Provider from "oidc-provider";

/** A local OpenID Provider (oidc-provider) on a free loopback port, for sign-in tests. */
export interface TestOidcProvider {
  /** `http://127.0.0.1:PORT`: the issuer to configure. */
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** Registers the client with its redirect URI (known once the inbox listens); before, every request is a 503. */
  register(redirectUri: string): void;
  stop(): Promise<void>;
}

/**
 * Starts the provider's port first (so its issuer URL is known for Charter's configuration), and
 * the provider itself at `register`. Any login is accepted (oidc-provider's dev interactions): the
 * account id is the login, and its claims `email` (the login) with `email_verified` true. PKCE is
 * required.
 */
export async function startOidcProvider(): Promise<TestOidcProvider> {
  const handler: { fn?: (req: IncomingMessage, res: ServerResponse) => void } = {};
  const server = createServer((req, res) => {
    if (handler.fn) handler.fn(req, res);
    else res.writeHead(503).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  const issuer = `http://127.0.0.1:${port}`;
  const clientId = "charter-inbox";
  const clientSecret = "inbox-test-secret-0123456789";
  return {
    issuer,
    clientId,
    clientSecret,
    register(redirectUri) {
      const provider = new Provider(issuer, {
        clients: [
          {
            client_id: clientId,
            client_secret: clientSecret,
            redirect_uris: [redirectUri],
            grant_types: ["authorization_code"],
            response_types: ["code"],
            token_endpoint_auth_method: "client_secret_basic",
          },
        ],
        findAccount: (_ctx: unknown, id: string) => ({
          accountId: id,
          claims: () => Promise.resolve({ sub: id, email: id, email_verified: true }),
        }),
        claims: { openid: ["sub"], email: ["email", "email_verified"] },
        pkce: { required: () => true },
        cookies: { keys: ["oidc-test-cookie-key"] },
        features: { devInteractions: { enabled: true } },
      });
      handler.fn = provider.callback();
    },
    stop: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
