import type { ServerResponse } from "node:http";
import { isAuthorityError } from "../authority/index.js";
import { HttpError, sendHtml } from "./http.js";
import { messageBody } from "./views.js";
import { page } from "./html.js";

/** The log the inbox writes to (a pino logger is one). */
export interface InboxLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

const STATUS_OF = {
  INVALID_REQUEST: 400,
  UNAUTHENTICATED: 401,
  PERMISSION_DENIED: 403,
  NOT_FOUND: 404,
  FAILED_PRECONDITION: 409,
  RESOURCE_EXHAUSTED: 413,
} as const;

const TITLE_OF: Readonly<Record<number, string>> = {
  400: "Bad request",
  401: "Sign in first",
  403: "Not yours to answer",
  404: "Not found",
  405: "Method not allowed",
  409: "Cannot be done now",
  410: "This link is used up",
  413: "Too large",
  415: "Unsupported form",
  503: "Try again",
};

/**
 * Answers a failure as a page: an HttpError or an AuthorityError with its own (safe) message and
 * status; anything else is a 503 with a generic message, its cause in the log (a store that
 * cannot answer decides nothing).
 */
export function sendFailure(res: ServerResponse, err: unknown, log: InboxLog): void {
  let status = 503;
  let text = "Charter could not answer; nothing was changed. Try again.";
  if (err instanceof HttpError) {
    status = err.status;
    text = err.message;
  } else if (isAuthorityError(err)) {
    status = STATUS_OF[err.code];
    text = err.message;
  } else log.error({ err: { message: (err as Error).message } }, "inbox request failed");
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const title = TITLE_OF[status] ?? "Error";
  sendHtml(res, status, page(title, messageBody(title, text)));
}
