import { describe, expect, it } from "vitest";
import { displayJson, displayText } from "../../src/core/display-text.js";

describe("displayText()", () => {
  it.each([
    ["C0 controls", "a\u0000b\nc\td\u001b[31m", "a\\u{0}b\\u{A}c\\u{9}d\\u{1B}[31m"],
    ["DEL and C1 controls", "a\u007fb\u0085c\u009b", "a\\u{7F}b\\u{85}c\\u{9B}"],
    [
      "bidi overrides and embeddings",
      "\u202aa\u202bb\u202cc\u202dd\u202ee",
      "\\u{202A}a\\u{202B}b\\u{202C}c\\u{202D}d\\u{202E}e",
    ],
    ["bidi isolates", "\u2066a\u2067b\u2068c\u2069", "\\u{2066}a\\u{2067}b\\u{2068}c\\u{2069}"],
    ["bidi marks", "a\u200eb\u200fc\u061cd", "a\\u{200E}b\\u{200F}c\\u{61C}d"],
    [
      "zero-width characters",
      "a\u200bb\u200cc\u200dd\u2060e\ufefff",
      "a\\u{200B}b\\u{200C}c\\u{200D}d\\u{2060}e\\u{FEFF}f",
    ],
    [
      "other default-ignorables",
      "a\u00adb\u034fc\u2064d\u{e0041}e\u3164",
      "a\\u{AD}b\\u{34F}c\\u{2064}d\\u{E0041}e\\u{3164}",
    ],
    ["a variation selector after a letter", "a\ufe0f", "a\\u{FE0F}"],
    ["line and paragraph separators", "a\u2028b\u2029c", "a\\u{2028}b\\u{2029}c"],
    ["lone surrogates", "a\ud800b\udfffc", "a\\u{D800}b\\u{DFFF}c"],
  ])("shows %s as visible escapes", (_what, text, shown) => {
    expect(displayText(text)).toBe(shown);
    expect(displayText(shown)).toBe(shown);
  });

  it("shows the finding's refund note as the owner would need to read it", () => {
    const note = "refund for order \u202e0001 ot\u202c";
    expect(displayText(note)).toBe("refund for order \\u{202E}0001 ot\\u{202C}");
  });

  it.each([
    'plain ASCII, with \\ backslashes and "quotes"',
    "<script>alert(1)</script> & <b>bold</b> &amp; 'x'",
    "Ωμέγα Кириллица 東京都 한국어 עברית العربية हिन्दी ไทย",
    "café (precomposed) and cafe\u0301 (combining acute)",
    "emoji 😀 👍🏽 ❤️ 👩‍💻 👨‍👩‍👧 🇵🇹 ✈︎ 1️⃣",
    "",
  ])("leaves ordinary text as it is: %j", (text) => {
    expect(displayText(text)).toBe(text);
  });

  it("does not let a joiner or selector pass outside an emoji", () => {
    expect(displayText("a\u200d😀")).toBe("a\\u{200D}😀");
    expect(displayText("😀\u200da")).toBe("😀\\u{200D}a");
    expect(displayText("\u200d")).toBe("\\u{200D}");
    expect(displayText("\ufe0f")).toBe("\\u{FE0F}");
  });
});

describe("displayJson()", () => {
  it("escapes strings and member names, and stays JSON", () => {
    const json = JSON.stringify({ "k\u202e": ["a\u2066b", 1, true, null, { n: "\u200b" }] });
    const shown = displayJson(json);
    expect(shown).not.toMatch(/[\u202e\u2066\u200b]/);
    expect(JSON.parse(shown)).toEqual({
      "k\\u{202E}": ["a\\u{2066}b", 1, true, null, { n: "\\u{200B}" }],
    });
  });

  it("leaves ordinary JSON text byte for byte, HTML included", () => {
    for (const json of ['"<script>x</script>"', '{"a":1.5,"b":["東京","😀"]}', "12"])
      expect(displayJson(json)).toBe(json);
  });

  it("escapes text that is not JSON as plain text", () => {
    expect(displayJson("\u202enot json")).toBe("\\u{202E}not json");
  });
});
