// Scanning a JSON text without building anything: the strict parser's helpers over raw text.

/**
 * The end of the array or object opening at `at` (just past its closing bracket), found by
 * counting brackets outside strings, without building anything: a container nested too deep is
 * passed over whole by a document parse. Its text is not checked here: whoever hands it on parses
 * it strictly.
 */
export function skipContainer(text: string, at: number, syntax: (what: string) => never): number {
  let depth = 0;
  for (let i = at; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      for (i += 1; i < text.length && text.charCodeAt(i) !== 0x22; i++)
        if (text.charCodeAt(i) === 0x5c) i += 1;
    } else if (c === 0x7b || c === 0x5b) depth += 1;
    else if (c === 0x7d || c === 0x5d) {
      depth -= 1;
      if (depth === 0) return i + 1;
    }
  }
  return syntax("unterminated array or object");
}

export function skipWs(text: string, at: number): number {
  let i = at;
  for (;;) {
    const c = text.charCodeAt(i);
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) i += 1;
    else return i;
  }
}

/** UTF-8 length of a string, counted only as far as needed to know it exceeds `max`. */
export function utf8Length(text: string, max: number): number {
  if (text.length > max) return text.length;
  if (text.length * 3 <= max) return text.length;
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      n += 4;
      i += 1;
    } else n += 3;
  }
  return n;
}
