import { describe, expect, it } from "vitest";
import { html, raw, shown } from "../../src/inbox/html.js";

describe("html``", () => {
  it("escapes every interpolated string, and lists of them", () => {
    const hostile = `<img src=x onerror="alert(1)">'&\``;
    expect(html`<p title="${hostile}">${hostile}${[hostile]}</p>`.markup).toBe(
      `<p title="&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&#39;&amp;&#96;">${"&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&#39;&amp;&#96;".repeat(2)}</p>`,
    );
  });

  it("keeps Html as is and refuses objects that are not Html", () => {
    expect(html`<b>${raw("<i>x</i>")}</b>`.markup).toBe("<b><i>x</i></b>");
    expect(() => html`${{ toString: () => "<x>" }}`).toThrow(TypeError);
  });
});

describe("shown()", () => {
  it("shows bidi and control characters as visible escapes, then escapes HTML", () => {
    expect(shown("a\u202Eb<script>\u0007").markup).toBe("a\\u{202E}b&lt;script&gt;\\u{7}");
  });
});
