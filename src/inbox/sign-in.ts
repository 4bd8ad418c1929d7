import type { IncomingMessage, ServerResponse } from "node:http";
import { html, page } from "./html.js";
import { HttpError, readForm, redirect, sendHtml, sessionCookie } from "./http.js";
import { SignInError, type OidcSignIn } from "./oidc.js";
import { csrfMatches, SESSION_COOKIE, type Sessions } from "./sessions.js";
import { messageBody } from "./views.js";

/** GET / without a session: how to sign in. */
export function signedOutPage(oidc: boolean, res: ServerResponse): void {
  const body = oidc
    ? html`<h1>Sign in</h1>
        <p>Sign in to see the approvals that wait for you.</p>
        <p><a class="button" href="/signin">Sign in</a></p>`
    : html`<h1>Charter inbox</h1>
        <p>
          No sign-in provider is configured: open the single-use link you were sent to answer an
          approval.
        </p>`;
  sendHtml(res, 200, page("Sign in", body));
}

/** GET /signin: a new sign-in; the checks stay in a fresh session, the browser goes to the provider. */
export async function signIn(
  oidc: OidcSignIn | undefined,
  sessions: Sessions,
  secure: boolean,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  if (oidc === undefined) throw new HttpError(404, "No sign-in provider is configured.");
  const started = await oidc.start().catch(signInFailure);
  const session = sessions.renew(sessions.of(req));
  session.oidc = started.checks;
  redirect(res, started.url, {
    "set-cookie": sessionCookie(SESSION_COOKIE, session.id, {
      secure,
      maxAgeSeconds: sessions.ttlSeconds,
    }),
  });
}

/**
 * GET /oidc/callback: the code exchanged (PKCE, state and nonce checked), the principal taken
 * from the ID token; the session is replaced by a new one, signed in.
 */
export async function callback(
  options: { readonly oidc?: OidcSignIn; baseUrl(): Promise<string | undefined> },
  sessions: Sessions,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const { oidc } = options;
  if (oidc === undefined) throw new HttpError(404, "No sign-in provider is configured.");
  const session = sessions.of(req);
  const checks = session?.oidc;
  if (session === undefined || checks === undefined)
    throw new HttpError(400, "This sign-in was not started here, or took too long: sign in again.");
  delete session.oidc;
  const base = await options.baseUrl();
  if (base === undefined) throw new HttpError(503, "The inbox does not know its own URL yet.");
  const principal = await oidc.finish(new URL(req.url ?? "/", base), checks).catch(signInFailure);
  const signed = sessions.renew(session);
  signed.principal = principal;
  const secure = base.startsWith("https:");
  redirect(res, "/", {
    "set-cookie": sessionCookie(SESSION_COOKIE, signed.id, {
      secure,
      maxAgeSeconds: sessions.ttlSeconds,
    }),
  });
}

/** POST /signout: the session ends (the form carries its CSRF token). */
export async function signOut(
  sessions: Sessions,
  secure: boolean,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const session = sessions.of(req);
  const form = await readForm(req);
  if (!csrfMatches(session, form.get("csrf")))
    throw new HttpError(403, "the form's CSRF token does not match this session; reload the page");
  if (session) sessions.end(session);
  sendHtml(res, 200, page("Signed out", messageBody("Signed out", "You are signed out.")), {
    "set-cookie": sessionCookie(SESSION_COOKIE, "", { secure, maxAgeSeconds: 0 }),
  });
}

function signInFailure(err: unknown): never {
  if (err instanceof SignInError) throw new HttpError(400, err.message);
  throw err;
}
