import type { ApprovalCursor } from "../store/port.js";
import { invalidRequest } from "./errors.js";

/** An opaque page token for the page after `cursor` (base64url JSON; clients must not build them). */
export function pageToken(cursor: ApprovalCursor): string {
  return Buffer.from(JSON.stringify({ v: 1, c: cursor.createdAt, i: cursor.id })).toString(
    "base64url",
  );
}

/** The cursor a page token stands for; a token Charter did not make is INVALID_REQUEST. */
export function approvalCursor(token: string): ApprovalCursor {
  let raw: unknown;
  try {
    raw = JSON.parse(Buffer.from(token, "base64url").toString("utf8"));
  } catch {
    raw = undefined;
  }
  const t = (typeof raw === "object" && raw !== null ? raw : {}) as {
    v?: unknown;
    c?: unknown;
    i?: unknown;
  };
  if (t.v !== 1 || !Number.isSafeInteger(t.c) || typeof t.i !== "string") {
    throw invalidRequest("page_token", "is not a page token from a previous response");
  }
  return { createdAt: t.c as number, id: t.i };
}
