import type { IncomingMessage, ServerResponse } from "node:http";

/** The inbox's Content-Security-Policy: its own script and stylesheet, nothing inline, no framing. */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join("; ");

/** The most bytes a form body may hold (a note is at most 1000 characters). */
export const MAX_FORM_BYTES = 8 * 1024;

/** Headers every answer carries. */
export function securityHeaders(): Record<string, string> {
  return {
    "content-security-policy": CONTENT_SECURITY_POLICY,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cross-origin-opener-policy": "same-origin",
    "cross-origin-resource-policy": "same-origin",
    "cache-control": "no-store",
  };
}

/** An answer with a status the client's request caused or the inbox's own failure; its text is shown. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Sends an HTML page. */
export function sendHtml(
  res: ServerResponse,
  status: number,
  body: string,
  headers: Record<string, string | string[]> = {},
): void {
  res.writeHead(status, {
    ...securityHeaders(),
    "content-type": "text/html; charset=utf-8",
    ...headers,
  });
  res.end(body);
}

/** Redirects after a POST (303: the browser GETs the location). */
export function redirect(
  res: ServerResponse,
  location: string,
  headers: Record<string, string | string[]> = {},
): void {
  res.writeHead(303, { ...securityHeaders(), location, ...headers });
  res.end();
}

/**
 * Reads an `application/x-www-form-urlencoded` body of at most {@link MAX_FORM_BYTES}: another
 * type is 415, a larger body 413, a field given twice 400.
 */
export async function readForm(req: IncomingMessage): Promise<ReadonlyMap<string, string>> {
  const type = (req.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase();
  if (type !== "application/x-www-form-urlencoded")
    throw new HttpError(415, "a form must be sent as application/x-www-form-urlencoded");
  const text = await readBody(req, MAX_FORM_BYTES);
  const form = new Map<string, string>();
  for (const [key, value] of new URLSearchParams(text)) {
    if (form.has(key)) throw new HttpError(400, `the field "${key.slice(0, 32)}" is given twice`);
    form.set(key, value);
  }
  return form;
}

/** A request's body as text, of at most `max` bytes (declared or sent): larger is 413. */
export async function readBody(req: IncomingMessage, max: number): Promise<string> {
  const declared = Number(req.headers["content-length"] ?? "0");
  if (declared > max) throw new HttpError(413, "the request body is too large");
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > max) throw new HttpError(413, "the request body is too large");
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** The cookies of a request, by name (the first of a name wins). */
export function cookies(req: IncomingMessage): ReadonlyMap<string, string> {
  const out = new Map<string, string>();
  for (const part of (req.headers.cookie ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    if (!out.has(name)) out.set(name, part.slice(eq + 1).trim());
  }
  return out;
}

/** A session cookie: HttpOnly, SameSite=Lax (the OIDC callback is a cross-site GET), Secure with TLS. */
export function sessionCookie(
  name: string,
  value: string,
  options: { readonly secure: boolean; readonly maxAgeSeconds: number },
): string {
  return [
    `${name}=${value}`,
    "Path=/",
    "HttpOnly",
    "SameSite=Lax",
    `Max-Age=${options.maxAgeSeconds}`,
    ...(options.secure ? ["Secure"] : []),
  ].join("; ");
}
