/**
 * Untrusted text made safe to show a person (pure). Every code point that could make text look
 * other than it is becomes a visible escape `\u{XXXX}` (upper-case hex): C0 and C1 controls and
 * DEL; bidi controls (U+202A–202E embeddings and overrides, U+2066–2069 isolates, U+200E/U+200F,
 * U+061C); zero-width and every other default-ignorable code point (U+200B–200D, U+2060–206F,
 * U+FEFF, U+00AD, variation selectors, tag characters…); the line and paragraph separators
 * U+2028/U+2029; lone surrogates. Two emoji uses stay as they are: a zero-width joiner between two
 * pictographs (👩‍💻) and a variation selector right after one
 * (❤️, or in a keycap 1️⃣). Everything else, non-Latin
 * letters, combining marks and HTML specials included, is left as it is: `<script>` stays text,
 * and a page that shows it must escape it for HTML itself. Escapes are ASCII, so the function is
 * idempotent. Only what is shown changes: digests and signatures cover the original text.
 */
export function displayText(text: string): string {
  if (!UNSAFE.test(text)) return text;
  const points = Array.from(text);
  let out = "";
  for (const [i, point] of points.entries()) {
    if (!UNSAFE.test(point) || emojiJoin(points, i)) out += point;
    else out += `\\u{${(point.codePointAt(0) ?? 0).toString(16).toUpperCase()}}`;
  }
  return out;
}

/**
 * A JSON text (an approval summary's `value_json`) with every string in it, member names
 * included, passed through {@link displayText}: still JSON, and safe whether it is shown as it is
 * or parsed first. Text that is not JSON is escaped as plain text.
 */
export function displayJson(json: string): string {
  if (!UNSAFE.test(json)) return json;
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return displayText(json);
  }
  return JSON.stringify(displayValue(value));
}

function displayValue(value: unknown): unknown {
  if (typeof value === "string") return displayText(value);
  if (Array.isArray(value)) return value.map(displayValue);
  if (typeof value === "object" && value !== null)
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [displayText(k), displayValue(v)]),
    );
  return value;
}

// One test for all classes: controls, bidi, default-ignorables, separators, lone surrogates.
const UNSAFE =
  // eslint-disable-next-line no-control-regex
  /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]|\p{Default_Ignorable_Code_Point}|\p{Cs}/u;
const PICTOGRAPH = /^\p{Extended_Pictographic}$/u;
const ZWJ = "\u200d";
const VARIATION_SELECTOR = /^[\ufe0e\ufe0f]$/;
const SELECTOR_OR_TONE = /^(?:\ufe0f|[\u{1f3fb}-\u{1f3ff}])$/u;

/** A joiner between two pictographs, or a presentation selector after one (or in a keycap, 1️⃣). */
function emojiJoin(points: readonly string[], i: number): boolean {
  const point = points[i] ?? "";
  const before = points[i - 1] ?? "";
  if (VARIATION_SELECTOR.test(point))
    return PICTOGRAPH.test(before) || (/^[0-9#*]$/.test(before) && points[i + 1] === "\u20e3");
  if (point !== ZWJ) return false;
  // Before the joiner: a pictograph, possibly with its presentation selector or a skin tone.
  const base = SELECTOR_OR_TONE.test(before) ? (points[i - 2] ?? "") : before;
  return PICTOGRAPH.test(base) && PICTOGRAPH.test(points[i + 1] ?? "");
}
