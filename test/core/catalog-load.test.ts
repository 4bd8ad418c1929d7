import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  buildCatalog,
  isLoadError,
  LoadError,
  type JsonObject,
  type LoadProblem,
} from "../../src/core/index.js";
import { loadCatalogFile, parseDocumentText } from "../../src/load/documents.js";
import { VECTOR_ROOT } from "../support/vectors.js";
import { loadErrorOf } from "../support/load-error.js";

const FILE = "catalogs/test.yaml";

async function loadErrorOfAsync(run: () => Promise<unknown>): Promise<LoadError> {
  const err: unknown = await run().then(
    () => new Error("expected a LoadError, but nothing was thrown"),
    (e: unknown) => e,
  );
  if (isLoadError(err)) return err;
  throw err;
}

function tool(
  name: string,
  inputSchema: unknown = { type: "object" },
  extra: JsonObject = {},
): JsonObject {
  return {
    name,
    description: `The ${name} tool.`,
    inputSchema: inputSchema as JsonObject,
    ...extra,
  };
}

function catalogWith(...actions: unknown[]): JsonObject {
  return { version: "v1", actions: actions as JsonObject[] };
}

describe("buildCatalog() on a valid catalog", () => {
  const doc = catalogWith(
    {
      id: "email.send",
      effect: "external",
      delegable: true,
      resource: "mailbox/{to}",
      tool: tool("send_email", {
        type: "object",
        properties: { to: { type: "string", format: "email" } },
        required: ["to"],
      }),
    },
    { id: "audit.note" },
    {
      id: "report.read",
      tool: tool(
        "read_report",
        { type: "object" },
        { outputSchema: { type: "object", properties: { text: { type: "string" } } } },
      ),
    },
    { id: "static.thing", resource: "static/thing" },
  );

  it("indexes actions in document order and tools by name, with effect read and delegable false by default", () => {
    const catalog = buildCatalog(doc, FILE);
    expect(catalog.version).toBe("v1");
    expect([...catalog.actions.keys()]).toEqual([
      "email.send",
      "audit.note",
      "report.read",
      "static.thing",
    ]);
    expect([...catalog.tools.keys()]).toEqual(["send_email", "read_report"]);
    expect(catalog.tools.get("send_email")).toBe(catalog.actions.get("email.send"));
    expect(catalog.actions.get("audit.note")).toEqual({
      id: "audit.note",
      effect: "read",
      delegable: false,
    });
    expect(catalog.actions.get("email.send")).toMatchObject({
      effect: "external",
      delegable: true,
      resource: { template: "mailbox/{to}", arguments: ["to"] },
    });
    expect(catalog.actions.get("static.thing")?.resource).toEqual({
      template: "static/thing",
      arguments: [],
    });
    expect(catalog.actions.get("report.read")?.tool?.outputSchema).toEqual({
      type: "object",
      properties: { text: { type: "string" } },
    });
  });

  it("compiles each input schema once and hands the same compiled schema back", () => {
    const catalog = buildCatalog(doc, FILE);
    const action = catalog.actions.get("email.send");
    const schema = action?.tool?.inputSchema;
    if (!action?.input || !schema) throw new Error("email.send has a compiled input schema");
    expect(catalog.schemas.compile(schema)).toBe(action.input);
    // Equal text, different object: still the one compiled schema.
    expect(catalog.schemas.compile(structuredClone(schema))).toBe(action.input);
    expect(action.input.check({ to: "ana@example.com" })).toEqual([]);
    expect(action.input.check({ to: "nope" })).toEqual([
      { pointer: "/to", keyword: "format", detail: 'must match format "email"' },
    ]);
  });

  it("keeps its own copy of the document's schemas", () => {
    const copy = structuredClone(doc);
    const catalog = buildCatalog(copy, FILE);
    ((copy["actions"] as JsonObject[])[0]?.["tool"] as JsonObject)["inputSchema"] = {
      type: "object",
      properties: {},
    };
    expect(catalog.actions.get("email.send")?.tool?.inputSchema).toEqual(
      ((doc["actions"] as JsonObject[])[0]?.["tool"] as JsonObject)["inputSchema"],
    );
  });

  it("loads the shared basic fixture", async () => {
    const catalog = await loadCatalogFile(join(VECTOR_ROOT, "catalogs/basic.yaml"));
    expect(catalog.version).toBe("basic-1");
    expect([...catalog.actions.keys()]).toEqual([
      "email.read",
      "email.send",
      "files.read",
      "refund.issue",
      "shell.exec",
      "audit.note",
    ]);
  });
});

describe("buildCatalog() errors", () => {
  const cases: { name: string; actions: unknown[]; problem: Omit<LoadProblem, "file"> }[] = [
    {
      name: "a duplicate action id",
      actions: [{ id: "a.b" }, { id: "a.b", effect: "write" }],
      problem: { subject: "a.b", message: "duplicate action id" },
    },
    {
      name: "a duplicate tool name",
      actions: [
        { id: "one", tool: tool("same") },
        { id: "two", tool: tool("same") },
      ],
      problem: { subject: "two", message: 'duplicate tool name "same" (also used by one)' },
    },
    {
      name: "a tool name with a space",
      actions: [{ id: "a", tool: tool("send email") }],
      problem: {
        subject: "a",
        message: 'invalid tool name "send email" (must match ^[a-zA-Z0-9_-]{1,64}$)',
      },
    },
    {
      name: "a tool name of 65 characters",
      actions: [{ id: "a", tool: tool("x".repeat(65)) }],
      problem: {
        subject: "a",
        message: `invalid tool name "${"x".repeat(65)}" (must match ^[a-zA-Z0-9_-]{1,64}$)`,
      },
    },
    {
      name: "an empty tool name",
      actions: [{ id: "a", tool: tool("") }],
      problem: { subject: "a", message: 'invalid tool name "" (must match ^[a-zA-Z0-9_-]{1,64}$)' },
    },
    {
      name: "a tool name that is not a string",
      actions: [{ id: "a", tool: { ...tool("x"), name: 7 } }],
      problem: { subject: "a", message: "invalid tool name 7 (must match ^[a-zA-Z0-9_-]{1,64}$)" },
    },
    {
      name: "an unknown keyword in the input schema (strict mode)",
      actions: [
        {
          id: "a",
          tool: tool("t", { type: "object", properties: { n: { type: "integer", minimun: 1 } } }),
        },
      ],
      problem: {
        subject: "a",
        message: 'invalid inputSchema: strict mode: unknown keyword: "minimun"',
      },
    },
    {
      name: "a bad type value in the input schema",
      actions: [
        { id: "a", tool: tool("t", { type: "object", properties: { x: { type: "strin" } } }) },
      ],
      problem: {
        subject: "a",
        message:
          "invalid inputSchema: schema is invalid: data/properties/x/type must be equal to one of the allowed values, data/properties/x/type must be array, data/properties/x/type must match a schema in anyOf",
      },
    },
    {
      name: "an unknown format in the input schema",
      actions: [
        {
          id: "a",
          tool: tool("t", {
            type: "object",
            properties: { to: { type: "string", format: "emial" } },
          }),
        },
      ],
      problem: {
        subject: "a",
        message:
          'invalid inputSchema: unknown format "emial" ignored in schema at path "#/properties/to"',
      },
    },
    {
      name: "a pattern that is not a regular expression",
      actions: [
        {
          id: "a",
          tool: tool("t", { type: "object", properties: { p: { type: "string", pattern: "([" } } }),
        },
      ],
      problem: {
        subject: "a",
        message:
          'invalid inputSchema: /properties/p/pattern: pattern "([" is not a regular expression: Invalid regular expression: /([/u: Unterminated character class',
      },
    },
    {
      name: "a pattern the linear-time engine cannot run (a backreference)",
      actions: [
        {
          id: "a",
          tool: tool("t", {
            type: "object",
            properties: { p: { type: "object", patternProperties: { "^(x)\\1$": {} } } },
          }),
        },
      ],
      problem: {
        subject: "a",
        message:
          'invalid inputSchema: /properties/p/patternProperties/^(x)\\1$: pattern "^(x)\\\\1$" cannot run in linear time (RE2 has no backreferences or lookaround): error parsing regexp: invalid escape sequence: `\\1`',
      },
    },
    {
      name: "an invalid output schema",
      actions: [
        {
          id: "a",
          tool: tool("t", { type: "object" }, { outputSchema: { type: "object", propertiez: {} } }),
        },
      ],
      problem: {
        subject: "a",
        message: 'invalid outputSchema: strict mode: unknown keyword: "propertiez"',
      },
    },
    {
      name: "an output schema that is not an object",
      actions: [{ id: "a", tool: tool("t", { type: "object" }, { outputSchema: 5 }) }],
      problem: { subject: "a", message: "outputSchema must be a JSON Schema object" },
    },
    {
      name: "a string input schema",
      actions: [{ id: "a", tool: tool("t", { type: "string" }) }],
      problem: {
        subject: "a",
        message: 'inputSchema must be an object schema (with type: "object")',
      },
    },
    {
      name: "an input schema without a type",
      actions: [{ id: "a", tool: tool("t", { properties: {} }) }],
      problem: {
        subject: "a",
        message: 'inputSchema must be an object schema (with type: "object")',
      },
    },
    {
      name: "a list as input schema",
      actions: [{ id: "a", tool: tool("t", []) }],
      problem: {
        subject: "a",
        message: 'inputSchema must be an object schema (with type: "object")',
      },
    },
    {
      name: "a tool without an input schema",
      actions: [{ id: "a", tool: { name: "t", description: "d" } }],
      problem: {
        subject: "a",
        message: 'inputSchema must be an object schema (with type: "object")',
      },
    },
    {
      name: "a tool without a description",
      actions: [{ id: "a", tool: { name: "t", inputSchema: { type: "object" } } }],
      problem: { subject: "a", message: "tool description must be a non-empty string" },
    },
    {
      name: "a tool that is not an object",
      actions: [{ id: "a", tool: "send_email" }],
      problem: {
        subject: "a",
        message: "tool must be an object with name, description and inputSchema",
      },
    },
    {
      name: "a resource template naming an undeclared argument",
      actions: [
        {
          id: "a",
          resource: "item/{id}/{rev}",
          tool: tool("t", { type: "object", properties: { id: { type: "string" } } }),
        },
      ],
      problem: {
        subject: "a",
        message:
          'resource template "item/{id}/{rev}" names argument "rev", which the input schema does not declare',
      },
    },
    {
      name: "a resource template with arguments on an action without a tool",
      actions: [{ id: "a", resource: "item/{id}" }],
      problem: {
        subject: "a",
        message: 'resource template "item/{id}" names arguments but the action has no tool schema',
      },
    },
    {
      name: "an unclosed placeholder",
      actions: [
        {
          id: "a",
          resource: "mailbox/{to",
          tool: tool("t", { type: "object", properties: { to: { type: "string" } } }),
        },
      ],
      problem: {
        subject: "a",
        message:
          'invalid resource template "mailbox/{to": placeholders must look like {argument_name}',
      },
    },
    {
      name: "an empty placeholder",
      actions: [{ id: "a", resource: "mailbox/{}" }],
      problem: {
        subject: "a",
        message:
          'invalid resource template "mailbox/{}": placeholders must look like {argument_name}',
      },
    },
    {
      name: "a placeholder starting with a digit",
      actions: [{ id: "a", resource: "x/{1to}" }],
      problem: {
        subject: "a",
        message: 'invalid resource template "x/{1to}": placeholders must look like {argument_name}',
      },
    },
    {
      name: "an empty template",
      actions: [{ id: "a", resource: " " }],
      problem: { subject: "a", message: 'invalid resource template " ": template is empty' },
    },
    {
      name: "a template that is not a string",
      actions: [{ id: "a", resource: 42 }],
      problem: { subject: "a", message: "resource must be a template string such as mailbox/{to}" },
    },
    {
      name: "an unknown action key",
      actions: [{ id: "a", delegatable: true }],
      problem: { subject: "a", message: 'unknown key "delegatable"' },
    },
    {
      name: "an unknown tool key",
      actions: [{ id: "a", tool: tool("t", { type: "object" }, { colour: "red" }) }],
      problem: { subject: "a", message: 'unknown tool key "colour"' },
    },
    {
      name: "a bad effect",
      actions: [{ id: "a", effect: "delete" }],
      problem: {
        subject: "a",
        message: "effect must be one of read, write, external, destructive",
      },
    },
    {
      name: "a delegable that is not a boolean",
      actions: [{ id: "a", delegable: "yes" }],
      problem: { subject: "a", message: "delegable must be true or false" },
    },
    {
      name: "an invalid action id",
      actions: [{ id: "bad id" }],
      problem: {
        subject: "actions[0]",
        message: 'invalid action id "bad id" (letters, digits and _ . : -, at most 128)',
      },
    },
    {
      name: "a missing action id",
      actions: [{ effect: "read" }],
      problem: {
        subject: "actions[0]",
        message: "invalid action id undefined (letters, digits and _ . : -, at most 128)",
      },
    },
    {
      name: "an action that is not an object",
      actions: ["email.send"],
      problem: { subject: "actions[0]", message: "an action must be an object" },
    },
  ];

  it.each(cases)("names the file, the action and the problem for $name", ({ actions, problem }) => {
    const err = loadErrorOf(() => buildCatalog(catalogWith(...actions), FILE));
    expect(err.problems).toEqual([{ file: FILE, ...problem }]);
    expect(err.message).toBe(`${FILE}: ${String(problem.subject)}: ${problem.message}`);
    expect(err.name).toBe("LoadError");
    expect(err).toBeInstanceOf(LoadError);
  });

  it("reports every problem of a document at once, in document order", () => {
    const err = loadErrorOf(() =>
      buildCatalog(
        {
          version: "v1",
          owner: "ops",
          actions: [
            { id: "ok", tool: tool("dup") },
            { id: "ok" },
            {
              id: "schema.bad",
              tool: tool("s", {
                type: "object",
                properties: { n: { type: "integer", minimun: 1 } },
              }),
            },
            {
              id: "many.wrong",
              effect: "delete",
              delegable: 1,
              extra: true,
              tool: tool("no way"),
              resource: "x/{",
            },
            { id: "dup.name", tool: tool("dup") },
          ],
        },
        FILE,
      ),
    );
    expect(err.problems).toEqual([
      { file: FILE, message: 'unknown top-level key "owner"' },
      { file: FILE, subject: "ok", message: "duplicate action id" },
      {
        file: FILE,
        subject: "schema.bad",
        message: 'invalid inputSchema: strict mode: unknown keyword: "minimun"',
      },
      { file: FILE, subject: "many.wrong", message: 'unknown key "extra"' },
      {
        file: FILE,
        subject: "many.wrong",
        message: "effect must be one of read, write, external, destructive",
      },
      { file: FILE, subject: "many.wrong", message: "delegable must be true or false" },
      {
        file: FILE,
        subject: "many.wrong",
        message: 'invalid tool name "no way" (must match ^[a-zA-Z0-9_-]{1,64}$)',
      },
      {
        file: FILE,
        subject: "many.wrong",
        message: 'invalid resource template "x/{": placeholders must look like {argument_name}',
      },
      { file: FILE, subject: "dup.name", message: 'duplicate tool name "dup" (also used by ok)' },
    ]);
    expect(err.message.split("\n")).toEqual(
      err.problems.map(
        (p) => `${FILE}: ${p.subject === undefined ? "" : `${p.subject}: `}${p.message}`,
      ),
    );
  });

  it.each([
    {
      name: "a list",
      doc: [],
      messages: ["a catalog must be an object with `version` and `actions`"],
    },
    {
      name: "null",
      doc: null,
      messages: ["a catalog must be an object with `version` and `actions`"],
    },
    {
      name: "no version and no actions",
      doc: {},
      messages: ["`version` must be a non-empty string", "`actions` must be a list"],
    },
    {
      name: "a blank version and a map of actions",
      doc: { version: "  ", actions: { a: {} } },
      messages: ["`version` must be a non-empty string", "`actions` must be a list"],
    },
    {
      name: "a numeric version",
      doc: { version: 1, actions: [] },
      messages: ["`version` must be a non-empty string"],
    },
  ])("refuses a document that is $name", ({ doc, messages }) => {
    expect(loadErrorOf(() => buildCatalog(doc, FILE)).problems).toEqual(
      messages.map((message) => ({ file: FILE, message })),
    );
  });

  it("accepts an empty action list", () => {
    expect(buildCatalog({ version: "v1", actions: [] }, FILE).actions.size).toBe(0);
  });
});

describe("parseDocumentText()", () => {
  it("parses YAML, and JSON as YAML", () => {
    expect(parseDocumentText("version: v1\nactions:\n  - id: a\n", "c.yaml")).toEqual({
      version: "v1",
      actions: [{ id: "a" }],
    });
    expect(parseDocumentText('{"version": "v1", "actions": []}', "c.json")).toEqual({
      version: "v1",
      actions: [],
    });
  });

  it.each([
    {
      name: "an unclosed flow sequence",
      text: "actions: [1, 2\nversion: v1\n",
      message:
        "Flow sequence in block collection must be sufficiently indented and end with a ] at line 2, column 1:",
    },
    {
      name: "an unclosed quote",
      text: "version: 'v1\n",
      message: "Missing closing 'quote at line 2, column 1:",
    },
    {
      name: "a tab as indentation",
      text: "a:\n\tb: 1\n",
      message: "Tabs are not allowed as indentation at line 2, column 1:",
    },
    {
      name: "several documents",
      text: "a: 1\n---\nb: 2\n",
      message:
        "Source contains multiple documents; please use YAML.parseAllDocuments() at line 2, column 1:",
    },
  ])("refuses $name, naming the file and the line", ({ text, message }) => {
    const err = loadErrorOf(() => parseDocumentText(text, "bad.yaml"));
    expect(err.problems).toEqual([{ file: "bad.yaml", message }]);
    expect(err.message).toBe(`bad.yaml: ${message}`);
  });

  it("refuses duplicate keys, each one reported", () => {
    const err = loadErrorOf(() =>
      parseDocumentText("version: v1\ntool:\n  name: a\n  name: b\nversion: v2\n", "dup.yaml"),
    );
    expect(err.problems).toEqual([
      { file: "dup.yaml", message: "Map keys must be unique at line 4, column 3:" },
      { file: "dup.yaml", message: "Map keys must be unique at line 5, column 1:" },
    ]);
  });

  it("refuses duplicate keys in JSON text", () => {
    expect(
      loadErrorOf(() => parseDocumentText('{"id": "a", "id": "b"}', "dup.json")).problems,
    ).toEqual([{ file: "dup.json", message: "Map keys must be unique at line 1, column 13:" }]);
  });

  it("keeps a __proto__ key as data, without touching the prototype", () => {
    const value = parseDocumentText("__proto__: {polluted: true}\n", "proto.yaml") as Record<
      string,
      unknown
    >;
    expect(Object.keys(value)).toEqual(["__proto__"]);
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined();
  });
});

describe("loadCatalogFile()", () => {
  const dir = mkdtempSync(join(tmpdir(), "charter-catalog-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("refuses a missing file, naming it", async () => {
    const file = join(dir, "missing.yaml");
    const err = await loadErrorOfAsync(() => loadCatalogFile(file));
    expect(err.problems).toEqual([{ file, message: "cannot read: file not found" }]);
    expect(err.message).toBe(`${file}: cannot read: file not found`);
  });

  it("refuses a directory, naming it", async () => {
    const err = await loadErrorOfAsync(() => loadCatalogFile(dir));
    expect(err.problems).toEqual([
      { file: dir, message: "cannot read: EISDIR: illegal operation on a directory, read" },
    ]);
  });

  it("names the file in YAML and catalog problems alike", async () => {
    const yamlFile = join(dir, "dup.yaml");
    writeFileSync(yamlFile, "version: v1\nversion: v2\nactions: []\n");
    expect((await loadErrorOfAsync(() => loadCatalogFile(yamlFile))).problems).toEqual([
      { file: yamlFile, message: "Map keys must be unique at line 2, column 1:" },
    ]);

    const catalogFile = join(dir, "bad.yaml");
    writeFileSync(catalogFile, "version: v1\nactions:\n  - id: a\n    effect: delete\n");
    expect((await loadErrorOfAsync(() => loadCatalogFile(catalogFile))).problems).toEqual([
      {
        file: catalogFile,
        subject: "a",
        message: "effect must be one of read, write, external, destructive",
      },
    ]);
  });
});
