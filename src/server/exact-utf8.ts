import { configureTextEncoding } from "@bufbuild/protobuf/wire";

/**
 * Makes protobuf-es decode strings to exactly the characters sent. Its default decoder is a
 * WHATWG `TextDecoder` without `ignoreBOM`, which silently drops a leading U+FEFF from every
 * string field: `"\ufeffweb_search"` would be decided on as `web_search`. With `ignoreBOM: true`
 * the BOM stays, so the name decided on is the bytes received (and is UNKNOWN_ACTION).
 * Process-wide (protobuf-es keeps one text encoding on `globalThis`); calling it again is harmless.
 */
export function configureExactUtf8(): void {
  const encoder = new TextEncoder();
  const lenient = new TextDecoder("utf-8", { ignoreBOM: true });
  const strict = new TextDecoder("utf-8", { ignoreBOM: true, fatal: true });
  configureTextEncoding({
    encodeUtf8: (text) => encoder.encode(text),
    decodeUtf8: (bytes, strictMode) => (strictMode === true ? strict : lenient).decode(bytes),
    checkUtf8: (text) => {
      try {
        encodeURIComponent(text);
        return true;
      } catch {
        return false;
      }
    },
  });
}
