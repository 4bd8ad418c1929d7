import { randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { cookies } from "./http.js";

/** The session cookie's name. */
export const SESSION_COOKIE = "charter_inbox";

/** A browser's session with the inbox: kept in this process only, never in the browser but its id. */
export interface Session {
  readonly id: string;
  /** The CSRF token every POST of this session must carry. */
  readonly csrf: string;
  /** Who signed in (OIDC); absent for a session that only holds a link's form. */
  principal?: string;
  /** Unix milliseconds. */
  expiresAt: number;
  /** An OIDC sign-in under way: what the callback must match. */
  oidc?: { readonly state: string; readonly nonce: string; readonly verifier: string };
}

/** Sessions by id, bounded: the oldest go first when full. */
export interface Sessions {
  /** The request's live session, if its cookie names one. */
  of(req: IncomingMessage): Session | undefined;
  /** The request's live session, or a new one (its cookie is to be set). */
  ensure(req: IncomingMessage): { readonly session: Session; readonly created: boolean };
  /** A new session in place of the old one (at sign-in, so a planted id is never signed in). */
  renew(old: Session | undefined): Session;
  end(session: Session): void;
  readonly ttlSeconds: number;
}

const token = () => randomBytes(32).toString("base64url");

/** In-memory sessions of `ttlSeconds`, at most `max` of them. */
export function createSessions(options: {
  readonly ttlSeconds: number;
  readonly max: number;
  readonly now?: () => number;
}): Sessions {
  const now = options.now ?? Date.now;
  const byId = new Map<string, Session>();
  const make = (): Session => {
    const session: Session = {
      id: token(),
      csrf: token(),
      expiresAt: now() + options.ttlSeconds * 1000,
    };
    if (byId.size >= options.max) {
      const oldest = byId.keys().next().value;
      if (oldest !== undefined) byId.delete(oldest);
    }
    byId.set(session.id, session);
    return session;
  };
  const of = (req: IncomingMessage): Session | undefined => {
    const id = cookies(req).get(SESSION_COOKIE);
    if (id === undefined) return undefined;
    const session = byId.get(id);
    if (session === undefined) return undefined;
    if (session.expiresAt <= now()) {
      byId.delete(id);
      return undefined;
    }
    return session;
  };
  return {
    of,
    ensure(req) {
      const found = of(req);
      return found ? { session: found, created: false } : { session: make(), created: true };
    },
    renew(old) {
      if (old) byId.delete(old.id);
      return make();
    },
    end(session) {
      byId.delete(session.id);
    },
    ttlSeconds: options.ttlSeconds,
  };
}

/** Whether `given` is this session's CSRF token (compared in constant time). */
export function csrfMatches(session: Session | undefined, given: string | undefined): boolean {
  if (session === undefined || given === undefined) return false;
  const a = Buffer.from(session.csrf);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}
