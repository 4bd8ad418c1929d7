import * as client from "openid-client";

/** Where the inbox sends approvers to sign in, and what it takes from the ID token. */
export interface OidcSettings {
  readonly issuer: string;
  readonly clientId: string;
  /** "" for a public client (PKCE alone). */
  readonly clientSecret: string;
  /** The claim that is the principal (`email` counts only when `email_verified` is true). */
  readonly claim: string;
  /** The inbox's base URL: the redirect URI is `<base>/oidc/callback`. */
  baseUrl(): Promise<string | undefined>;
}

/** What a sign-in under way must match at the callback. */
export interface OidcChecks {
  readonly state: string;
  readonly nonce: string;
  readonly verifier: string;
}

/** Authorization code with PKCE against one issuer (openid-client). */
export interface OidcSignIn {
  /** The provider's authorization URL for a new sign-in, and the checks to keep in the session. */
  start(): Promise<{ readonly url: string; readonly checks: OidcChecks }>;
  /** The principal of a callback whose code, state and nonce match `checks`; throws otherwise. */
  finish(callbackUrl: URL, checks: OidcChecks): Promise<string>;
}

/** Raised for a sign-in that cannot complete; the message is safe to show. */
export class SignInError extends Error {}

function isLoopbackHost(host: string): boolean {
  return host === "localhost" || host === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/**
 * A sign-in on `settings`: the issuer's discovery document is read at the first sign-in (and
 * again after a failure), not at start, so a provider that is down delays sign-in only. An
 * `http:` issuer is accepted on loopback only (tests, a local provider).
 */
export function createOidcSignIn(settings: OidcSettings): OidcSignIn {
  const issuer = new URL(settings.issuer);
  if (issuer.protocol === "http:" && !isLoopbackHost(issuer.hostname))
    throw new SignInError(
      `inboxOidcIssuer ${issuer.origin} is plain http: an issuer must be https (http only on loopback)`,
    );
  const memo: { config?: Promise<client.Configuration> } = {};
  const configuration = (): Promise<client.Configuration> => {
    memo.config ??= client
      .discovery(
        issuer,
        settings.clientId,
        undefined,
        settings.clientSecret === ""
          ? client.None()
          : client.ClientSecretBasic(settings.clientSecret),
        // Plain http only for a loopback issuer (checked above): a local provider, tests.
        // eslint-disable-next-line @typescript-eslint/no-deprecated
        issuer.protocol === "http:" ? { execute: [client.allowInsecureRequests] } : undefined,
      )
      .catch((err: unknown) => {
        delete memo.config;
        throw new SignInError(
          `the sign-in provider cannot be reached (${(err as Error).message}); try again`,
        );
      });
    return memo.config;
  };
  const redirectUri = async () => {
    const base = await settings.baseUrl();
    if (base === undefined) throw new SignInError("the inbox does not know its own URL yet");
    return `${base}/oidc/callback`;
  };
  return {
    async start() {
      const config = await configuration();
      const checks = {
        state: client.randomState(),
        nonce: client.randomNonce(),
        verifier: client.randomPKCECodeVerifier(),
      };
      const url = client.buildAuthorizationUrl(config, {
        redirect_uri: await redirectUri(),
        scope: settings.claim === "email" ? "openid email" : "openid email profile",
        code_challenge: await client.calculatePKCECodeChallenge(checks.verifier),
        code_challenge_method: "S256",
        state: checks.state,
        nonce: checks.nonce,
      });
      return { url: url.href, checks };
    },
    async finish(callbackUrl, checks) {
      const config = await configuration();
      let claims: Record<string, unknown> | undefined;
      try {
        const tokens = await client.authorizationCodeGrant(config, callbackUrl, {
          pkceCodeVerifier: checks.verifier,
          expectedState: checks.state,
          expectedNonce: checks.nonce,
          idTokenExpected: true,
        });
        const idToken = tokens.claims();
        claims = idToken;
        // A provider may keep the claim for its userinfo endpoint (the ID token's subject's).
        if (idToken !== undefined && idToken[settings.claim] === undefined)
          claims = {
            ...(await client.fetchUserInfo(config, tokens.access_token, idToken.sub)),
            sub: idToken.sub,
          };
      } catch (err) {
        throw new SignInError(`sign-in failed: ${(err as Error).message}`);
      }
      const principal = claims?.[settings.claim];
      if (typeof principal !== "string" || principal === "" || principal.length > 256)
        throw new SignInError(`the ID token carries no usable "${settings.claim}" claim`);
      if (settings.claim === "email" && claims?.email_verified !== true)
        throw new SignInError("the provider has not verified this email address");
      return principal;
    },
  };
}
