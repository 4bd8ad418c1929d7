/**
 * The URI entries of a certificate's subject alternative names, read from the text Node gives
 * (`subjectaltname` of a peer certificate, `X509Certificate.subjectAltName`): entries joined by
 * `, `, each `TYPE:value`, where a value holding a comma, a quote, a backslash, a control
 * character or non-ASCII bytes is a JSON string literal (`URI:"a\u002c b"`) and any other value is
 * written as is. Undefined when the text is not in that form: the caller refuses the
 * certificate rather than guess.
 */
export function uriSubjectAltNames(text: string | undefined): readonly string[] | undefined {
  if (text === undefined || text === "") return [];
  const entries = splitEntries(text);
  if (entries === undefined) return undefined;
  const uris: string[] = [];
  for (const entry of entries) {
    if (!entry.startsWith("URI:")) continue;
    const value = entry.slice("URI:".length);
    if (!value.startsWith('"')) {
      // Node quotes a value holding either; one written as is never does.
      if (/["\\]/.test(value)) return undefined;
      uris.push(value);
      continue;
    }
    try {
      const parsed: unknown = JSON.parse(value);
      if (typeof parsed !== "string") return undefined;
      uris.push(parsed);
    } catch {
      return undefined;
    }
  }
  return uris;
}

/** The entries of `text`, split at the `, ` that stand outside a JSON string; undefined if a string is left open. */
function splitEntries(text: string): string[] | undefined {
  const entries: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (quoted) {
      if (c === "\\") i += 1;
      else if (c === '"') quoted = false;
    } else if (c === '"') quoted = true;
    else if (c === "," && text[i + 1] === " ") {
      entries.push(text.slice(start, i));
      start = i + 2;
      i += 1;
    } else if (c === ",") return undefined;
  }
  if (quoted) return undefined;
  entries.push(text.slice(start));
  return entries;
}
