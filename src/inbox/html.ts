import { displayText } from "../authority/index.js";

/** Markup that is already safe: made only by {@link html} and {@link raw}, never from input. */
export interface Html {
  readonly markup: string;
}

const ESCAPES: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
  "`": "&#96;",
};

/** HTML-escapes text for an element's content or a quoted attribute. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (c) => ESCAPES[c] as string);
}

/**
 * Text a caller, an agent or a policy wrote, as a page may show it: control, bidi and invisible
 * characters as visible escapes (`\u{202E}`), then HTML-escaped.
 */
export function shown(text: string): Html {
  return { markup: escapeHtml(displayText(text)) };
}

/** Markup written in this layer's own code (a constant), trusted as is. */
export function raw(markup: string): Html {
  return { markup };
}

/**
 * A template whose every interpolation is escaped unless it is already {@link Html} (or a list of
 * it): the only way pages are made, so no input reaches the page unescaped.
 */
export function html(strings: TemplateStringsArray, ...values: readonly unknown[]): Html {
  let out = strings[0] ?? "";
  values.forEach((value, i) => {
    out += piece(value) + (strings[i + 1] ?? "");
  });
  return { markup: out };
}

function piece(value: unknown): string {
  if (Array.isArray(value)) return value.map(piece).join("");
  if (typeof value === "object" && value !== null && "markup" in value)
    return (value as Html).markup;
  if (value === undefined || value === null || value === false) return "";
  if (typeof value === "string") return escapeHtml(value);
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  throw new TypeError("a page may interpolate only text, numbers and Html");
}

/** The page around `body`: the static stylesheet and script only (the CSP allows nothing else). */
export function page(
  title: string,
  body: Html,
  options: { readonly principal?: string; readonly csrf?: string } = {},
): string {
  const who =
    options.principal === undefined
      ? html``
      : html`<p class="who">Signed in as <strong>${shown(options.principal)}</strong></p>
          ${
            options.csrf === undefined
              ? html``
              : html`<form method="post" action="/signout" class="signout">
                  <input type="hidden" name="csrf" value="${options.csrf}" /><button type="submit">
                    Sign out
                  </button>
                </form>`
          }`;
  return `<!doctype html>${
    html`<html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${shown(title)} · Charter inbox</title>
        <link rel="stylesheet" href="/static/inbox.css" />
        <script src="/static/inbox.js" defer></script>
      </head>
      <body>
        <header><a href="/" class="brand">Charter inbox</a>${who}</header>
        <main id="main">${body}</main>
      </body>
    </html> `.markup
  }`;
}
