import { beforeAll, describe, expect, it } from "vitest";
import {
  compose,
  decide,
  delegate,
  isJsonObject,
  projectCatalog,
  type Catalog,
  type ComposeRequest,
  type Policy,
  type TaskGrant,
  type ToolCall,
  type Verdict,
} from "../../src/core/index.js";
import { loadCatalogFile, loadPolicyFile } from "../../src/load/documents.js";

// The demo that `npm start` serves: fixtures/catalog.yaml and fixtures/policy.yaml. These tests
// pin what the comments in those files promise a new operator.

const CATALOG_FILE = new URL("../../fixtures/catalog.yaml", import.meta.url).pathname;
const POLICY_FILE = new URL("../../fixtures/policy.yaml", import.meta.url).pathname;
const NOW = 1_796_000_000;

let catalog: Catalog;
let policy: Policy;

beforeAll(async () => {
  catalog = await loadCatalogFile(CATALOG_FILE);
  policy = await loadPolicyFile(POLICY_FILE, catalog);
});

function request(profile: string, extra: Partial<ComposeRequest> = {}): ComposeRequest {
  return { profile, subject: `agent:${profile}`, owner: "user:ana", purpose: "demo", ...extra };
}

function grantFor(profile: string): TaskGrant {
  const result = compose(request(profile), policy, catalog, NOW, `g-${profile}`);
  if (result.kind !== "granted")
    throw new Error(`profile ${profile} did not compose: ${JSON.stringify(result)}`);
  return result.grant;
}

function call(toolName: string, args: unknown): ToolCall {
  return { callId: `call-${toolName}`, toolName, arguments: args };
}

/** Decides a call on a profile's grant, one minute into its life, with no approval record. */
function decideOn(profile: string, toolName: string, args: unknown): Verdict {
  return decide(grantFor(profile), catalog, call(toolName, args), { now: NOW + 60 });
}

/** Profiles that name a source whose status is suspended, computed from the policy. */
function profilesWithSuspendedSource(): string[] {
  return [...policy.profiles.values()]
    .filter((p) => p.sources.some((s) => policy.sources.get(s)?.status === "suspended"))
    .map((p) => p.id);
}

function toolNameOf(actionId: string): string {
  const name = catalog.actions.get(actionId)?.tool?.name;
  if (name === undefined) throw new Error(`${actionId} has no tool`);
  return name;
}

const SMALL_REFUND = { order_id: "ord_A1B2C3", amount: 25, currency: "EUR", reason: "damaged" };

describe("demo catalog (fixtures/catalog.yaml)", () => {
  it("loads with at least 25 actions", () => {
    expect(catalog.actions.size).toBeGreaterThanOrEqual(25);
  });

  it("covers email, calendar, files, payments, CRM, web, shell, sub-agents and messaging", () => {
    const ids = [...catalog.actions.keys()];
    for (const id of [
      "email.read",
      "email.search",
      "email.draft",
      "email.send",
      "email.delete",
      "calendar.list",
      "calendar.create",
      "calendar.cancel",
      "files.read",
      "files.write",
      "files.list",
      "files.delete",
      "refund.issue",
      "payment.charge",
      "invoice.read",
      "contact.lookup",
      "contact.update",
      "deal.update",
      "web.search",
      "web.fetch",
      "shell.exec",
      "agent.commission",
      "telegram.reply:owner_channel",
    ]) {
      expect(ids).toContain(id);
    }
  });

  it("has at least one internal action without a tool", () => {
    const internal = [...catalog.actions.values()]
      .filter((a) => a.tool === undefined)
      .map((a) => a.id);
    expect(internal).toContain("audit.note");
  });

  it("gives every tool a closed input schema whose required names are declared properties", () => {
    for (const action of catalog.actions.values()) {
      if (!action.tool) continue;
      const schema = action.tool.inputSchema;
      expect(schema["additionalProperties"], action.id).toBe(false);
      const properties = isJsonObject(schema["properties"]) ? schema["properties"] : {};
      expect(Object.keys(properties).length, action.id).toBeGreaterThan(0);
      const required = Array.isArray(schema["required"]) ? schema["required"] : [];
      expect(required.length, action.id).toBeGreaterThan(0);
      for (const name of required) expect(Object.keys(properties), action.id).toContain(name);
    }
  });

  it("gives every tool a description of at least one full sentence", () => {
    for (const action of catalog.actions.values()) {
      if (!action.tool) continue;
      expect(action.tool.description.length, action.id).toBeGreaterThanOrEqual(40);
      expect(action.tool.description.trim().endsWith("."), action.id).toBe(true);
    }
  });

  it("makes no destructive action delegable", () => {
    const destructiveDelegable = [...catalog.actions.values()]
      .filter((a) => a.effect === "destructive" && a.delegable)
      .map((a) => a.id);
    expect(destructiveDelegable).toEqual([]);
  });
});

describe("demo policy (fixtures/policy.yaml)", () => {
  it("loads with at least three profiles, including a shadow one", () => {
    expect(policy.profiles.size).toBeGreaterThanOrEqual(3);
    for (const id of [
      "owner-assistant",
      "receptionist",
      "email-drafter",
      "owner-assistant-dryrun",
    ]) {
      expect([...policy.profiles.keys()]).toContain(id);
    }
    expect(policy.profiles.get("owner-assistant-dryrun")?.mode).toBe("shadow");
  });

  it("composes every profile except the one naming a suspended source", () => {
    const suspended = profilesWithSuspendedSource();
    for (const profile of policy.profiles.keys()) {
      const result = compose(request(profile), policy, catalog, NOW, `g-${profile}`);
      if (suspended.includes(profile)) {
        expect(result, profile).toMatchObject({ kind: "denied", code: "SOURCE_SUSPENDED" });
      } else {
        expect(result.kind, `${profile}: ${JSON.stringify(result)}`).toBe("granted");
      }
    }
  });

  it("refuses the legacy-integration profile because its source is suspended", () => {
    expect(profilesWithSuspendedSource()).toEqual(["legacy-integration"]);
    const result = compose(request("legacy-integration"), policy, catalog, NOW, "g-legacy");
    expect(result).toMatchObject({ kind: "denied", code: "SOURCE_SUSPENDED" });
    if (result.kind === "denied") expect(result.message).toContain("legacy-crm-sync");
  });

  it("denies shell.exec and files.delete in every composed grant through the global guardrails", () => {
    const suspended = profilesWithSuspendedSource();
    for (const profile of policy.profiles.keys()) {
      if (suspended.includes(profile)) continue;
      const grant = grantFor(profile);
      expect(grant.sources, profile).toContain("org-guardrails");
      expect(grant.denied, profile).toEqual(expect.arrayContaining(["files.delete", "shell.exec"]));
    }
  });

  it("never lets the owner assistant take a destructive action without approval", () => {
    const grant = grantFor("owner-assistant");
    const destructive = [...catalog.actions.values()]
      .filter((a) => a.effect === "destructive")
      .map((a) => a.id);
    expect(destructive.length).toBeGreaterThan(0);
    for (const id of destructive) expect(grant.allowed, id).not.toContain(id);
  });

  it("gives each profile the smallest limits its sources set", () => {
    const owner = grantFor("owner-assistant");
    expect(owner.limits).toEqual({ maxCalls: 300, maxCallsPerAction: 60, maxDelegationDepth: 2 });
    expect(owner.expiresAt - owner.issuedAt).toBe(7200);

    const receptionist = grantFor("receptionist");
    expect(receptionist.limits).toEqual({
      maxCalls: 40,
      maxCallsPerAction: 10,
      maxDelegationDepth: 0,
    });
    expect(receptionist.expiresAt - receptionist.issuedAt).toBe(900);

    const drafter = grantFor("email-drafter");
    expect(drafter.limits).toEqual({ maxCalls: 40, maxCallsPerAction: 15, maxDelegationDepth: 0 });
    expect(drafter.expiresAt - drafter.issuedAt).toBe(1800);
  });
});

describe("receptionist catalog view", () => {
  const RECEPTIONIST_ACTIONS = [
    "calendar.freebusy",
    "contact.lookup",
    "telegram.reply:inbound_chat",
    "telegram.reply:owner_channel",
    "calendar.create",
  ];

  it("holds only the stranger-safe tools, with meetings needing approval", () => {
    const view = projectCatalog(grantFor("receptionist"), catalog);
    expect(view.tools.map((t) => t.actionId).sort()).toEqual([...RECEPTIONIST_ACTIONS].sort());
    expect(
      view.tools.filter((t) => t.status === "requires_approval").map((t) => t.actionId),
    ).toEqual(["calendar.create"]);
    const ceiling = policy.sources.get("stranger-safe");
    expect(ceiling?.kind).toBe("narrow");
    for (const entry of view.tools) expect(ceiling?.allow).toContain(entry.actionId);
  });

  it("contains no id, name, description or schema text of any other action", () => {
    const view = projectCatalog(grantFor("receptionist"), catalog);
    const shown = new Set(view.tools.map((t) => t.actionId));
    const text = JSON.stringify(view);
    const forbidden: string[] = [];
    for (const action of catalog.actions.values()) {
      if (shown.has(action.id)) continue;
      forbidden.push(action.id);
      if (!action.tool) continue;
      forbidden.push(
        action.tool.name,
        action.tool.description,
        JSON.stringify(action.tool.inputSchema),
      );
      if (action.tool.outputSchema) forbidden.push(JSON.stringify(action.tool.outputSchema));
    }
    expect(forbidden.length).toBeGreaterThan(3 * (catalog.actions.size - shown.size));
    for (const s of forbidden) expect(text, `"${s.slice(0, 60)}" must not appear`).not.toContain(s);
  });

  it("shows visitors' contact lookups limited to name and company", () => {
    const view = projectCatalog(grantFor("receptionist"), catalog);
    const lookup = view.tools.find((t) => t.actionId === "contact.lookup");
    expect(lookup?.inputSchema["required"]).toContain("fields");
    const verdict = decideOn("receptionist", toolNameOf("contact.lookup"), {
      query: "Rui Alves",
      fields: ["name", "phone"],
    });
    expect(verdict).toMatchObject({ decision: "deny", reason: { code: "CONSTRAINT_VIOLATION" } });
    expect(
      decideOn("receptionist", toolNameOf("contact.lookup"), {
        query: "Rui Alves",
        fields: ["name", "company"],
      }).decision,
    ).toBe("allow");
  });

  it("refuses tools outside the stranger-safe set as not granted", () => {
    const verdict = decideOn("receptionist", toolNameOf("email.send"), {
      to: "ana@example.com",
      subject: "Hi",
      body: "Hello",
    });
    expect(verdict).toMatchObject({ decision: "deny", reason: { code: "NOT_GRANTED" } });
  });
});

describe("owner-assistant verdicts", () => {
  it("allows a small refund and names the order as the resource", () => {
    expect(decideOn("owner-assistant", toolNameOf("refund.issue"), SMALL_REFUND)).toMatchObject({
      decision: "allow",
      actionId: "refund.issue",
      resource: `order/${SMALL_REFUND.order_id}`,
    });
  });

  it("asks a manager to approve a refund above 100", () => {
    const verdict = decideOn("owner-assistant", toolNameOf("refund.issue"), {
      ...SMALL_REFUND,
      amount: 250,
    });
    expect(verdict).toMatchObject({ decision: "require_approval", requirement: "manager" });
  });

  it("refuses refunds of 5000 or more with the rule's reason", () => {
    const verdict = decideOn("owner-assistant", toolNameOf("refund.issue"), {
      ...SMALL_REFUND,
      amount: 5000,
    });
    expect(verdict).toMatchObject({ decision: "deny", reason: { code: "RULE_DENY" } });
    expect(verdict.reason?.message).toMatch(/finance/);
  });

  it("denies shell.exec explicitly", () => {
    const verdict = decideOn("owner-assistant", toolNameOf("shell.exec"), { command: "ls /" });
    expect(verdict).toMatchObject({
      decision: "deny",
      actionId: "shell.exec",
      reason: { code: "EXPLICIT_DENY" },
    });
  });

  it("reads files under /workspace/ but not outside it or by climbing out with ..", () => {
    const read = toolNameOf("files.read");
    expect(decideOn("owner-assistant", read, { path: "/workspace/notes/todo.md" })).toMatchObject({
      decision: "allow",
      resource: "file//workspace/notes/todo.md",
    });
    for (const path of ["/etc/passwd", "/workspace/../etc/passwd"]) {
      expect(decideOn("owner-assistant", read, { path }), path).toMatchObject({
        decision: "deny",
        reason: { code: "CONSTRAINT_VIOLATION" },
      });
    }
  });

  it("sends internal email outright and asks the owner before emailing outside example.com", () => {
    const send = toolNameOf("email.send");
    const message = { subject: "Agenda", body: "Draft agenda attached." };
    expect(decideOn("owner-assistant", send, { to: "rui@example.com", ...message }).decision).toBe(
      "allow",
    );
    expect(decideOn("owner-assistant", send, { to: "rui@partner.org", ...message })).toMatchObject({
      decision: "require_approval",
      requirement: "owner",
      resource: "mailbox/rui@partner.org",
    });
  });

  it("messages only the owner's own Telegram chat", () => {
    const grant = grantFor("owner-assistant");
    const bound = grant.caveats["telegram.reply:owner_channel"]?.binds["chat_id"];
    expect(typeof bound).toBe("number");
    const tool = toolNameOf("telegram.reply:owner_channel");
    expect(decideOn("owner-assistant", tool, { chat_id: bound, text: "Done." }).decision).toBe(
      "allow",
    );
    expect(
      decideOn("owner-assistant", tool, { chat_id: Number(bound) + 1, text: "Done." }),
    ).toMatchObject({
      decision: "deny",
      reason: { code: "CONSTRAINT_VIOLATION" },
    });
  });

  it("can hand drafting on to a sub-agent but not refunds", () => {
    const parent = grantFor("owner-assistant");
    const drafting = delegate(
      parent,
      {
        subject: "agent:drafter",
        allowed: ["email.draft", "email.read", "email.search"],
        approvalRequired: ["email.send"],
      },
      catalog,
      NOW + 60,
      "g-child",
    );
    expect(drafting).toMatchObject({
      kind: "granted",
      grant: { parentId: parent.id, approvalRequired: ["email.send"] },
    });
    const refunds = delegate(
      parent,
      { subject: "agent:refunder", allowed: ["refund.issue"] },
      catalog,
      NOW + 60,
      "g-child-2",
    );
    expect(refunds).toMatchObject({ kind: "refused", code: "ACTION_NOT_DELEGABLE" });
  });
});

describe("owner-assistant-dryrun verdicts", () => {
  it("suppresses the effect of a call the live profile would allow", () => {
    const verdict = decideOn("owner-assistant-dryrun", toolNameOf("refund.issue"), SMALL_REFUND);
    expect(verdict).toMatchObject({
      decision: "effect_suppressed",
      reason: { code: "SHADOW_MODE" },
    });
  });

  it("still denies what the live profile denies", () => {
    const verdict = decideOn("owner-assistant-dryrun", toolNameOf("shell.exec"), {
      command: "ls /",
    });
    expect(verdict).toMatchObject({ decision: "deny", reason: { code: "EXPLICIT_DENY" } });
  });
});

describe("email-drafter view", () => {
  it("shows the bound recipient of send_email as const", () => {
    const bound = policy.sources.get("email-drafter")?.caveats.get("email.send")?.binds["to"];
    expect(typeof bound).toBe("string");
    const view = projectCatalog(grantFor("email-drafter"), catalog);
    const send = view.tools.find((t) => t.actionId === "email.send");
    const properties = send?.inputSchema["properties"];
    expect(isJsonObject(properties) ? properties["to"] : undefined).toMatchObject({ const: bound });
  });

  it("drafts to anyone but sends only to the bound recipient", () => {
    const message = { subject: "Re: offer", body: "Thanks, we accept." };
    expect(
      decideOn("email-drafter", toolNameOf("email.draft"), { to: "rui@partner.org", ...message })
        .decision,
    ).toBe("allow");
    expect(
      decideOn("email-drafter", toolNameOf("email.send"), { to: "rui@partner.org", ...message }),
    ).toMatchObject({
      decision: "deny",
      reason: { code: "CONSTRAINT_VIOLATION" },
    });
  });
});
