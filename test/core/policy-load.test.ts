import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  buildPolicy,
  DEFAULT_RUNTIME_SECONDS,
  type JsonObject,
  type LoadProblem,
} from "../../src/core/index.js";
import { loadPolicyFile } from "../../src/load/documents.js";
import { catalogOf, policyOf, VECTOR_ROOT } from "../support/vectors.js";
import { loadErrorOf } from "../support/load-error.js";

const FILE = "policies/test.yaml";
const catalog = catalogOf("basic");

/** A policy document with these sources, and one profile using all of them. */
function policyWith(sources: JsonObject, profiles?: JsonObject): JsonObject {
  return {
    version: "p1",
    sources,
    profiles: profiles ?? { all: { sources: Object.keys(sources) } },
  };
}

function problemsOf(doc: unknown): readonly LoadProblem[] {
  return loadErrorOf(() => buildPolicy(doc, catalog, FILE)).problems;
}

const problem = (subject: string, message: string): LoadProblem => ({
  file: FILE,
  subject,
  message,
});

describe("buildPolicy() on a valid policy", () => {
  it("loads the basic fixture's sources, profiles, limits and caveats", () => {
    const policy = policyOf("basic", catalog);
    expect(policy.version).toBe("basic-policy-1");
    expect(policy.catalogVersion).toBe("basic-1");
    expect(policy.defaultRuntimeSeconds).toBe(3600);
    expect([...policy.sources.keys()]).toEqual(["assistant", "org-deny"]);
    expect(policy.sources.get("org-deny")).toMatchObject({
      kind: "grant",
      status: "active",
      global: true,
      deny: ["shell.exec"],
      allow: [],
      approval: [],
    });
    const assistant = policy.sources.get("assistant");
    expect(assistant?.limits).toEqual({
      maxCalls: 100,
      maxCallsPerAction: 20,
      maxDelegationDepth: 2,
      maxRuntimeSeconds: 1800,
    });
    expect(assistant?.caveats.get("files.read")).toEqual({
      constraints: [{ properties: { path: { type: "string", pattern: "^/workspace/" } } }],
      binds: {},
      rules: [],
    });
    expect(assistant?.caveats.get("refund.issue")?.rules.map((r) => [r.then, r.source])).toEqual([
      ["require_approval", "assistant"],
      ["deny", "assistant"],
    ]);
    expect(policy.profiles.get("shadow-assistant")).toEqual({
      id: "shadow-assistant",
      description: "",
      sources: ["assistant"],
      mode: "shadow",
    });
    expect(policy.profiles.get("assistant")?.mode).toBe("live");
  });

  it("uses the default runtime when the document sets none, and accepts a depth limit of 0", () => {
    const policy = buildPolicy(
      policyWith({ s: { allow: ["email.read"], limits: { maxDelegationDepth: 0 } } }),
      catalog,
      FILE,
    );
    expect(policy.defaultRuntimeSeconds).toBe(DEFAULT_RUNTIME_SECONDS);
    expect(policy.sources.get("s")?.limits).toEqual({ maxDelegationDepth: 0 });
  });

  it("keeps its own copy of constraints, binds and rules", () => {
    const doc = policyWith({
      s: {
        allow: ["email.send"],
        constraints: {
          "email.send": {
            schema: { properties: { subject: { maxLength: 50 } } },
            bind: { to: "ana@example.com" },
          },
        },
        rules: {
          "email.send": [{ when: { required: ["subject"] }, then: "deny", reason: "No subjects." }],
        },
      },
    });
    const policy = buildPolicy(doc, catalog, FILE);
    const s = (doc["sources"] as JsonObject)["s"] as JsonObject;
    const constraint = (s["constraints"] as JsonObject)["email.send"] as JsonObject;
    (constraint["bind"] as JsonObject)["to"] = "eve@example.com";
    ((constraint["schema"] as JsonObject)["properties"] as JsonObject)["subject"] = {};
    (((s["rules"] as JsonObject)["email.send"] as JsonObject[])[0] as JsonObject)["when"] = {};
    expect(policy.sources.get("s")?.caveats.get("email.send")).toEqual({
      constraints: [{ properties: { subject: { maxLength: 50 } } }],
      binds: { to: "ana@example.com" },
      rules: [
        { when: { required: ["subject"] }, then: "deny", reason: "No subjects.", source: "s" },
      ],
    });
  });

  it("loads the basic fixture from its file", async () => {
    const policy = await loadPolicyFile(join(VECTOR_ROOT, "policies/basic.yaml"), catalog);
    expect([...policy.profiles.keys()]).toEqual(["assistant", "shadow-assistant"]);
  });
});

describe("buildPolicy() errors", () => {
  const cases: {
    name: string;
    sources: JsonObject;
    profiles?: JsonObject;
    problems: LoadProblem[];
  }[] = [
    {
      name: "actions missing from the catalog in allow, approval and deny",
      sources: {
        s: { allow: ["email.read", "ghost.a"], approval: ["ghost.b"], deny: ["ghost.c"] },
      },
      problems: [
        problem("source s allow", 'names action "ghost.a", which the catalog lacks'),
        problem("source s approval", 'names action "ghost.b", which the catalog lacks'),
        problem("source s deny", 'names action "ghost.c", which the catalog lacks'),
      ],
    },
    {
      name: "actions missing from the catalog in constraints and rules",
      sources: {
        s: {
          constraints: { "ghost.d": { schema: {} } },
          rules: { "ghost.e": [{ when: {}, then: "deny", reason: "r" }] },
        },
      },
      problems: [
        problem("source s", 'constraints name action "ghost.d", which the catalog lacks'),
        problem("source s", 'rules name action "ghost.e", which the catalog lacks'),
      ],
    },
    {
      name: "a profile naming a missing source",
      sources: { s: { allow: ["email.read"] } },
      profiles: { p: { sources: ["s", "ghost"] } },
      problems: [problem("profile p", 'names source "ghost", which the policy lacks')],
    },
    ...[
      { what: "an unknown verb", rule: { when: {}, then: "block" } },
      {
        what: "require_approval without a requirement",
        rule: { when: {}, then: "require_approval" },
      },
      {
        what: "a requirement that is not a name",
        rule: { when: {}, then: "require_approval", requirement: "the boss" },
      },
      { what: "deny without a reason", rule: { when: {}, then: "deny" } },
      { what: "deny with a blank reason", rule: { when: {}, then: "deny", reason: " " } },
      {
        what: "deny with a requirement",
        rule: { when: {}, then: "deny", reason: "r", requirement: "owner" },
      },
      {
        what: "require_approval with a reason",
        rule: { when: {}, then: "require_approval", requirement: "owner", reason: "r" },
      },
    ].map(({ what, rule }) => ({
      name: `a rule with a bad then (${what})`,
      sources: { s: { rules: { "email.send": [rule] } } },
      problems: [
        problem(
          "source s rules email.send[0]",
          "then must be require_approval (with a requirement name) or deny (with a reason)",
        ),
      ],
    })),
    {
      name: "a rule that is not a rule",
      sources: {
        s: {
          rules: {
            "email.send": [
              "deny",
              { when: 5, then: "deny", reason: "r" },
              { when: {}, then: "deny", reason: "r", unless: {} },
            ],
            "email.read": {},
          },
        },
      },
      problems: [
        problem("source s rules email.send[0]", "a rule is an object with `when` and `then`"),
        problem("source s rules email.send[1]", "when must be a JSON Schema over the arguments"),
        problem("source s rules email.send[2]", 'unknown key "unless"'),
        problem("source s rules email.read", "must be a list of rules"),
      ],
    },
    {
      name: "a rule and a constraint naming properties the tool schema forbids",
      sources: {
        s: {
          constraints: { "email.send": { schema: { properties: { cc: { type: "string" } } } } },
          rules: {
            "email.send": [
              { when: { required: ["subject", "bcc"] }, then: "deny", reason: "No blind copies." },
            ],
          },
        },
      },
      problems: [
        problem(
          "source s constraints email.send",
          'names property "cc", which the tool\'s input schema forbids',
        ),
        problem(
          "source s rules email.send[0]",
          'names property "bcc", which the tool\'s input schema forbids',
        ),
      ],
    },
    {
      name: "a bind of a property the tool schema forbids",
      sources: {
        s: {
          constraints: {
            "email.send": { bind: { to: "ana@example.com", cc: "boss@example.com" } },
          },
        },
      },
      problems: [
        problem(
          "source s constraints email.send",
          'bind: names property "cc", which the tool\'s input schema forbids',
        ),
      ],
    },
    {
      name: "bind values the tool's property schema rejects",
      sources: {
        s: {
          constraints: {
            "email.read": { bind: { folder: "spam" } },
            "refund.issue": { bind: { currency: "GBP", order_id: "ord_1" } },
            "email.send": { bind: { to: 42 } },
          },
        },
      },
      problems: [
        problem(
          "source s constraints email.read",
          'bind: property "folder" is fixed to a value the tool\'s schema for it rejects',
        ),
        problem(
          "source s constraints refund.issue",
          'bind: property "currency" is fixed to a value the tool\'s schema for it rejects',
        ),
        problem(
          "source s constraints email.send",
          'bind: property "to" is fixed to a value the tool\'s schema for it rejects',
        ),
      ],
    },
    {
      name: "constraints and rules whose fixed values the tool rejects",
      sources: {
        s: {
          constraints: {
            "email.read": { schema: { properties: { folder: { enum: ["spam", "junk"] } } } },
          },
          rules: {
            "email.read": [
              {
                when: { properties: { folder: { const: "drafts" } }, required: ["folder"] },
                then: "deny",
                reason: "r",
              },
            ],
          },
        },
      },
      problems: [
        problem(
          "source s constraints email.read",
          'property "folder" is fixed to values the tool\'s schema for it rejects',
        ),
        problem(
          "source s rules email.read[0]",
          'property "folder" is fixed to a value the tool\'s schema for it rejects',
        ),
      ],
    },
    {
      name: "schemas that do not compile or can never match",
      sources: {
        s: {
          constraints: {
            "email.read": { schema: { properties: { limit: { type: "int" } } } },
            "files.read": { schema: 5 },
          },
          rules: {
            "email.read": [
              { when: { properties: { limit: { minimun: 1 } } }, then: "deny", reason: "r" },
              { when: false, then: "deny", reason: "r" },
            ],
          },
        },
      },
      problems: [
        problem(
          "source s constraints email.read",
          "invalid schema: schema is invalid: data/properties/limit/type must be equal to one of the allowed values, data/properties/limit/type must be array, data/properties/limit/type must match a schema in anyOf",
        ),
        problem("source s constraints files.read", "schema must be a JSON Schema object"),
        problem(
          "source s rules email.read[0]",
          'invalid when: strict mode: unknown keyword: "minimun"',
        ),
        problem("source s rules email.read[1]", "the schema `false` can never match"),
      ],
    },
    {
      name: "patterns the linear-time engine cannot run (lookahead, backreference)",
      sources: {
        s: {
          constraints: {
            "email.read": { schema: { properties: { folder: { pattern: "^(?!sent)" } } } },
          },
          rules: {
            "email.read": [
              {
                when: { properties: { folder: { not: { pattern: "(a)\\1" } } } },
                then: "deny",
                reason: "r",
              },
            ],
          },
        },
      },
      problems: [
        problem(
          "source s constraints email.read",
          'invalid schema: /properties/folder/pattern: pattern "^(?!sent)" cannot run in linear time (RE2 has no backreferences or lookaround): error parsing regexp: invalid or unsupported Perl syntax: `(?!`',
        ),
        problem(
          "source s rules email.read[0]",
          'invalid when: /properties/folder/not/pattern: pattern "(a)\\\\1" cannot run in linear time (RE2 has no backreferences or lookaround): error parsing regexp: invalid escape sequence: `\\1`',
        ),
      ],
    },
    {
      name: "malformed constraints",
      sources: {
        s: {
          constraints: { "email.read": { schema: {}, where: {} }, "email.send": { bind: ["to"] } },
        },
        t: { constraints: [], rules: [] },
      },
      problems: [
        problem(
          "source s constraints email.read",
          "a constraint is an object with `schema` and/or `bind`",
        ),
        problem(
          "source s constraints email.send",
          "bind must be a map from argument name to exact value",
        ),
        problem("source t", "constraints must be a map from action id to {schema, bind}"),
        problem("source t", "rules must be a map from action id to a list of rules"),
      ],
    },
    {
      name: "bad limits",
      sources: {
        s: {
          limits: {
            maxCalls: 0,
            maxCallsPerAction: 1.5,
            maxDelegationDepth: -1,
            maxRuntimeSeconds: "600",
            maxCost: 5,
          },
        },
        t: { limits: [10] },
      },
      problems: [
        problem("source s", "limit maxCalls must be a positive integer"),
        problem("source s", "limit maxCallsPerAction must be a positive integer"),
        problem("source s", "limit maxDelegationDepth must be a non-negative integer"),
        problem("source s", "limit maxRuntimeSeconds must be a positive integer"),
        problem("source s", 'unknown limit "maxCost"'),
        problem("source t", "limits must be an object"),
      ],
    },
    {
      name: "unknown keys and bad fields in sources and profiles",
      sources: {
        s: {
          alow: ["email.read"],
          kind: "widen",
          status: "paused",
          global: "yes",
          allow: "email.read",
          deny: [1],
        },
        t: 5,
      },
      profiles: { p: { sources: "s", mode: "dry-run", colour: "red", description: 5 }, q: 4 },
      problems: [
        problem("source s", 'unknown key "alow"'),
        problem("source s", "kind must be grant or narrow"),
        problem("source s", "status must be active or suspended"),
        problem("source s", "global must be true or false"),
        problem("source s allow", "must be a list of action ids"),
        problem("source s deny", "must be a list of action ids"),
        problem("source t", "a source must be an object"),
        problem("profile p", 'unknown key "colour"'),
        problem("profile p", "sources must be a list of source ids"),
        problem("profile p", "mode must be live or shadow"),
        problem("profile p", "description must be a string"),
        problem("profile q", "a profile must be an object with `sources`"),
      ],
    },
    {
      name: "ids that are not names",
      sources: { "bad id": {}, __proto__x: {} },
      profiles: { "-p": { sources: [] } },
      problems: [
        problem("bad id", "invalid sources id (letters, digits and _ . : -, at most 128)"),
        problem("__proto__x", "invalid sources id (letters, digits and _ . : -, at most 128)"),
        problem("-p", "invalid profiles id (letters, digits and _ . : -, at most 128)"),
      ],
    },
  ];

  it.each(cases)("reports $name with file and subject", ({ sources, profiles, problems }) => {
    const err = loadErrorOf(() => buildPolicy(policyWith(sources, profiles), catalog, FILE));
    expect(err.problems).toEqual(problems);
    expect(err.message.split("\n")).toEqual(
      problems.map((p) => `${FILE}: ${String(p.subject)}: ${p.message}`),
    );
  });

  it("reports every problem of a document at once", () => {
    const problems = problemsOf({
      version: "",
      extra: true,
      defaults: { maxRuntimeSeconds: 0 },
      sources: {
        a: { allow: ["ghost.a"], limits: { maxCalls: -1 } },
        b: {
          rules: { "email.send": [{ when: {}, then: "block" }] },
          constraints: { "email.read": { bind: { folder: "spam" } } },
        },
      },
      profiles: { p: { sources: ["a", "b", "c"] } },
    });
    expect(problems).toEqual([
      { file: FILE, message: 'unknown top-level key "extra"' },
      { file: FILE, message: "`version` must be a non-empty string" },
      problem("defaults", "defaults may only set maxRuntimeSeconds, a positive integer"),
      problem("source a allow", 'names action "ghost.a", which the catalog lacks'),
      problem("source a", "limit maxCalls must be a positive integer"),
      problem(
        "source b constraints email.read",
        'bind: property "folder" is fixed to a value the tool\'s schema for it rejects',
      ),
      problem(
        "source b rules email.send[0]",
        "then must be require_approval (with a requirement name) or deny (with a reason)",
      ),
      problem("profile p", 'names source "c", which the policy lacks'),
    ]);
  });

  it.each([
    {
      name: "null",
      doc: null,
      problems: [
        {
          file: FILE,
          message: "a policy must be an object with `version`, `sources` and `profiles`",
        },
      ],
    },
    {
      name: "lists where maps belong",
      doc: { version: 1, sources: [], profiles: 5 },
      problems: [
        { file: FILE, message: "`version` must be a non-empty string" },
        { file: FILE, message: "`sources` must be a map from id to definition" },
        { file: FILE, message: "`profiles` must be a map from id to definition" },
      ],
    },
    {
      name: "defaults with another key",
      doc: {
        version: "v",
        sources: {},
        profiles: {},
        defaults: { maxRuntimeSeconds: 60, maxCalls: 1 },
      },
      problems: [
        problem("defaults", "defaults may only set maxRuntimeSeconds, a positive integer"),
      ],
    },
  ])("refuses a document that is $name", ({ doc, problems }) => {
    expect(problemsOf(doc)).toEqual(problems);
  });
});

describe("loadPolicyFile()", () => {
  const dir = mkdtempSync(join(tmpdir(), "charter-policy-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("refuses a missing file, naming it", async () => {
    const file = join(dir, "missing.yaml");
    await expect(loadPolicyFile(file, catalog)).rejects.toMatchObject({
      name: "LoadError",
      problems: [{ file, message: "cannot read: file not found" }],
    });
  });

  it("names the file in policy problems", async () => {
    const file = join(dir, "policy.yaml");
    writeFileSync(file, 'version: p1\nsources:\n  s:\n    allow: ["ghost.a"]\nprofiles: {}\n');
    await expect(loadPolicyFile(file, catalog)).rejects.toMatchObject({
      problems: [
        {
          file,
          subject: "source s allow",
          message: 'names action "ghost.a", which the catalog lacks',
        },
      ],
    });
  });
});
