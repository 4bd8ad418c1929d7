import { X509Certificate } from "node:crypto";
import { rmSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { uriSubjectAltNames } from "../../src/server/subject-alt-names.js";
import { makeTestPki } from "../support/certs.js";

const pki = makeTestPki();
afterAll(() => rmSync(pki.dir, { recursive: true, force: true }));

describe("uriSubjectAltNames()", () => {
  it("reads the URIs as Node writes them, quoted or not", () => {
    expect(uriSubjectAltNames("DNS:a, URI:spiffe://td/w, IP Address:127.0.0.1")).toEqual([
      "spiffe://td/w",
    ]);
    expect(uriSubjectAltNames('URI:"spiffe://td/a\\u002c URI:spiffe://td/b", URI:x')).toEqual([
      "spiffe://td/a, URI:spiffe://td/b",
      "x",
    ]);
    expect(uriSubjectAltNames(undefined)).toEqual([]);
    expect(uriSubjectAltNames("")).toEqual([]);
  });

  it("reads what Node reports of real certificates", () => {
    const text = (uris: string[]) => new X509Certificate(pki.svid(uris).cert).subjectAltName;
    expect(uriSubjectAltNames(text(["spiffe://td/w"]))).toEqual(["spiffe://td/w"]);
    // A comma is quoted; IA5String bytes outside ASCII come back one character per byte.
    expect(
      uriSubjectAltNames(text(["spiffe://td/a, URI:spiffe://td/b", "spiffe://td/c\u00e9"])),
    ).toEqual(["spiffe://td/a, URI:spiffe://td/b", "spiffe://td/c\u00c3\u00a9"]);
  });

  it.each(['URI:"spiffe://td/w', 'URI:"a" b', "URI:a,URI:b", 'URI:a"b', "URI:a\\b", 'URI:"\\x"'])(
    "is undefined for text not in Node's form: %s",
    (text) => {
      expect(uriSubjectAltNames(text)).toBeUndefined();
    },
  );
});
